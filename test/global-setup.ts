// Once per test run: make sure the managed Python environment exists (first use builds it)
// and the C libca runner is built.
import { ensurePythonEnv } from '../packages/epicsperf/src/pyenv/index.js';
import { buildCRunner } from '../packages/epicsperf/src/bench/clib.js';
import { buildPvxsRunner } from '../packages/epicsperf/src/bench/cxxlib.js';

export default async function setup(): Promise<void> {
  const python = await ensurePythonEnv();
  const c = await buildCRunner(python);
  if ('error' in c) process.stderr.write(`C runner not built: ${c.error}\n`);
  const p = await buildPvxsRunner(python);
  if ('error' in p) process.stderr.write(`pvxs runner not built: ${p.error}\n`);
}
