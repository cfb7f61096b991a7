// Before each file of the IOC tiers: the managed Python environment, which the global setup
// started building (test/global-setup.ts); at once when it is ready, else waiting for that build.
import { ensurePythonEnv } from '../packages/epicsperf/src/pyenv/index.js';

await ensurePythonEnv();
