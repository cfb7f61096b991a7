// The test IOC, a dev-only helper the packages' tests share: the tool's built-in IOC (EPICS
// base's RSRV and QSRV from the wheels), the Python environment it runs in, free ports, and
// children killed with the test. The client's tests reach the tool through here only.
export { type Ioc, settingNames, settingValue, startIoc } from '../../packages/epicsperf/src/ioc/index.js';
export { freePort } from '../../packages/epicsperf/src/ioc/ports.js';
export { killOnExit } from '../../packages/epicsperf/src/children.js';
export { ensurePythonEnv, pythonModule } from '../../packages/epicsperf/src/pyenv/index.js';
