// The test IOC the packages' tests share: the tool's built-in IOC (EPICS base's RSRV and QSRV
// from the wheels), the Python environment it runs in, free ports, and children killed with the
// test. The client's tests reach the tool through the testkit only.
export { type Ioc, settingNames, settingValue, startIoc } from 'epicsperf/dist/ioc/index.js';
export { freePort } from 'epicsperf/dist/ioc/ports.js';
export { killOnExit } from 'epicsperf/dist/children.js';
export { ensurePythonEnv, pythonModule } from 'epicsperf/dist/pyenv/index.js';
