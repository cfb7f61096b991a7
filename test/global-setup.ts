// Once per test run: make sure the managed Python environment exists (first use builds it) and
// the runners of other languages are built (C, C++, Java, Rust); bench runs the tests make are
// kept in a temporary folder (EPICSPERF_RESULTS, inherited by the test files), removed at the
// end, never in the user's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonEnv } from '../packages/epicsperf/src/pyenv/index.js';
import { buildCRunner } from '../packages/epicsperf/src/toolchains/clib.js';
import { buildPvxsRunner } from '../packages/epicsperf/src/toolchains/cxxlib.js';
import { buildRunners, CLIENTS } from '../packages/epicsperf/src/clients/index.js';

// One folder for the run, whichever project's setup comes first.
let results: string | undefined;

export default async function setup(): Promise<() => void> {
  results ??= mkdtempSync(join(tmpdir(), 'epicsperf-test-results-'));
  process.env.EPICSPERF_RESULTS = results;
  const python = await ensurePythonEnv();
  const c = await buildCRunner(python);
  if ('error' in c) process.stderr.write(`C runner not built: ${c.error}\n`);
  const p = await buildPvxsRunner(python);
  if ('error' in p) process.stderr.write(`pvxs runner not built: ${p.error}\n`);
  for (const [runtime, r] of Object.entries(await buildRunners(CLIENTS)))
    if ('error' in r) process.stderr.write(`${runtime} runners not built: ${r.error}\n`);
  return () => rmSync(results!, { recursive: true, force: true });
}
