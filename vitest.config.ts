import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

const client = (path: string): string => fileURLToPath(new URL(`./packages/client/src/${path}`, import.meta.url));

// Four tiers, one project each; `vitest run` runs them all, one group after another (unit; then
// measure; then browser and integration side by side), and `--project <name>` runs one.
// - unit: codecs, framers, sessions against the fake servers, fuzz, reports on fixtures. No
//   Python, no C runner, no IOC, no browser: no global setup, and files in parallel.
// - browser: pages in headless Chromium (packages/epicsperf/test/helpers/browser.ts).
// - integration: the built-in IOC, the real clients, namespace hosts; files that time nothing
//   tighter than a second, several at once (they mostly wait on processes, timeouts and the network).
// - measure: the files whose assertions are rates, CPU or capacity (MEASURE below), one at a
//   time and with no other test file. They run before the integration files: on a fresh machine
//   the runners' first builds (`npm test` starts them at a lower priority) take the cores they
//   leave idle, most of two, where after the integration files nothing else would.
// browser, integration and measure have the global setup, which starts building the Python
// environment and the C runner on libca (every file needs the IOC, and the C runner referees
// values) without holding up the unit files, and each of their files waits for the environment
// (test/python-ready.ts); a file that runs
// other runners builds them first as the CLI does (prepareClients), waiting for a build already
// under way (`npm test` starts them all in the background: scripts/test.mjs).
/** Files at once in the browser and integration tiers, on two cores: most of a file's time is spent waiting. */
const WORKERS = 3;
const MEASURE = [
  'packages/epicsperf/test/integration/bench-headroom.test.ts',
  'packages/epicsperf/test/integration/bench-latency.test.ts',
  'packages/epicsperf/test/integration/bench-load.test.ts',
  'packages/epicsperf/test/integration/cli-bench-capture.test.ts',
];
const PYTHON_AND_RUNNERS = ['test/global-setup.ts'];
/** Before each file of the IOC tiers: the Python environment, waited for (the unit files run meanwhile). */
const PYTHON_READY = ['test/python-ready.ts'];
/**
 * The integration files that run every client's runner (or every putter, or every server), the
 * Rust ones included: their first build (`npm test` starts it in the background) is the longest,
 * minutes on a fresh machine. They run after the project's other files, so that the workers run
 * those meanwhile instead of holding a file that waits; longest first, so that the last to start
 * is short.
 */
const AFTER_FIRST_BUILDS = [
  'packages/epicsperf/test/integration/network.test.ts',
  'packages/epicsperf/test/integration/bench-runners.test.ts',
  'packages/epicsperf/test/integration/bench-runners-node.test.ts',
  'packages/epicsperf/test/integration/bench-servers-load.test.ts',
  'packages/epicsperf/test/integration/bench-crossing.test.ts',
  'packages/epicsperf/test/integration/bench-array-put.test.ts',
];

/** vitest's order (larger files first), with each project's AFTER_FIRST_BUILDS files at its end, in their order. */
class FirstBuildsLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => AFTER_FIRST_BUILDS.findIndex((p) => f.moduleId.endsWith(p));
    const out: TestSpecification[] = [];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j < sorted.length && sorted[j]!.project === sorted[i]!.project) j++;
      const block = sorted.slice(i, j);
      const late = block.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b));
      out.push(...block.filter((f) => rank(f) < 0), ...late);
      i = j;
    }
    return out;
  }
}

export default defineConfig({
  // The tool's own imports of the client package (and of epics-ops) resolve to their sources too: one copy of each
  // class in a test, whichever side made it. So do the testkit's imports of the tool (epicsperf/dist/..., which
  // benchmarks run built); tsconfig.json's paths say the same for `npm run typecheck`. The tests import the testkit
  // itself as epicsperf-testkit/<module>: its package.json's exports point at its sources.
  resolve: {
    alias: [
      { find: /^epics-client$/, replacement: client('index.ts') },
      { find: /^epics-client\/ca$/, replacement: client('ca/index.ts') },
      { find: /^epics-client\/pva$/, replacement: client('pva/index.ts') },
      { find: /^epics-client\/saveset$/, replacement: client('saveset/index.ts') },
      { find: /^epics-ops$/, replacement: fileURLToPath(new URL('./packages/ops/src/index.ts', import.meta.url)) },
      { find: /^epicsperf\/dist\/(.+)\.js$/, replacement: fileURLToPath(new URL('./packages/epicsperf/src/', import.meta.url)) + '$1.ts' },
    ],
  },
  test: {
    sequence: { sequencer: FirstBuildsLast },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // No test searches the host's own networks: a test that names no address list searches
    // nowhere rather than broadcasting there (packages/epicsperf/test/integration/network.test.ts builds hosts of its own).
    // The Rust runners are built unoptimised for the tests (rust/Cargo.toml's quick profile: a third
    // of release's build time); the tests check what they do, not their speed.
    env: { EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_AUTO_ADDR_LIST: 'NO', EPICSPERF_RUST_PROFILE: 'quick' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/unit/**/*.test.ts'],
          // Every file binds ports of its own (0, or freePort()): files run side by side, one per
          // core (some time sockets and timers in ms, so no more files at once than cores).
          maxWorkers: '100%',
          sequence: { groupOrder: 0 },
          // A unit test that reaches for Python fails at once, saying so, instead of building
          // the environment.
          env: { EPICSPERF_PYTHON: '/nonexistent/unit-tests-use-no-python' },
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['packages/*/test/browser/**/*.test.ts'],
          globalSetup: PYTHON_AND_RUNNERS,
          setupFiles: PYTHON_READY,
          // Beside the integration files, in the same pool (a group shares its number of workers).
          maxWorkers: WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/integration/**/*.test.ts'],
          exclude: MEASURE,
          globalSetup: PYTHON_AND_RUNNERS,
          setupFiles: PYTHON_READY,
          maxWorkers: WORKERS,
          // Tests marked concurrent (each client's runner checked on its own), two at a time in a
          // file: most of such a test is a runner starting and a timeout waited out. Three at once
          // was too many: a Java runner starting beside two others missed a 1 s timeout.
          maxConcurrency: 2,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'measure',
          include: MEASURE,
          globalSetup: PYTHON_AND_RUNNERS,
          setupFiles: PYTHON_READY,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
