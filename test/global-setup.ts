// Once per test run: the bench runs the tests make are kept in a temporary folder
// (EPICSPERF_RESULTS, inherited by the test files), removed at the end, never in the user's; and
// the managed Python environment (first use builds it) and the C runner on libca, which every file
// of the IOC tiers needs (the IOC runs in that environment; the C runner referees values), start
// building here without being waited for: the unit files, which need neither, run meanwhile, and
// each file of the IOC tiers waits for the environment itself (test/python-ready.ts). The other
// runners (C++, Java, Rust) are built by the files that run them, as the CLI builds them
// (prepareClients), so that no file waits for a build it does not need.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonEnv } from '../packages/epicsperf/src/pyenv/index.js';
import { buildCRunner } from '../packages/epicsperf/src/toolchains/clib.js';

// One folder for the run, and one start of the builds, whichever project's setup comes first.
let results: string | undefined;
let builds: Promise<void> | undefined;

export default function setup(): () => Promise<void> {
  results ??= mkdtempSync(join(tmpdir(), 'epicsperf-test-results-'));
  process.env.EPICSPERF_RESULTS = results;
  builds ??= ensurePythonEnv()
    .then((python) => buildCRunner(python))
    .then((c) => {
      if ('error' in c) process.stderr.write(`C runner not built: ${c.error}\n`);
    })
    .catch(() => undefined); // the files that need the environment say why it cannot be made
  return async () => {
    await builds;
    rmSync(results!, { recursive: true, force: true });
  };
}
