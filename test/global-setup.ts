// Once per test run: the managed Python environment (first use builds it) and the C runner on
// libca, which every file of the IOC tiers needs (the IOC runs in that environment; the C runner
// referees values). The other runners (C++, Java, Rust) are built by the files that run them, as
// the CLI builds them (prepareClients), so that no file waits for a build it does not need. Bench
// runs the tests make are kept in a temporary folder (EPICSPERF_RESULTS, inherited by the test
// files), removed at the end, never in the user's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonEnv } from '../packages/epicsperf/src/pyenv/index.js';
import { buildCRunner } from '../packages/epicsperf/src/toolchains/clib.js';

// One folder for the run, whichever project's setup comes first.
let results: string | undefined;

export default async function setup(): Promise<() => void> {
  results ??= mkdtempSync(join(tmpdir(), 'epicsperf-test-results-'));
  process.env.EPICSPERF_RESULTS = results;
  const c = await buildCRunner(await ensurePythonEnv());
  if ('error' in c) process.stderr.write(`C runner not built: ${c.error}\n`);
  return () => rmSync(results!, { recursive: true, force: true });
}
