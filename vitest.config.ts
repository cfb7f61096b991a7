import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const client = (path: string): string => fileURLToPath(new URL(`./packages/client/src/${path}`, import.meta.url));

export default defineConfig({
  // The tool's own imports of the client package resolve to its sources too: one copy of each
  // class in a test, whichever side made it.
  resolve: {
    alias: [
      { find: /^epics-client$/, replacement: client('index.ts') },
      { find: /^epics-client\/ca$/, replacement: client('ca/index.ts') },
      { find: /^epics-client\/pva$/, replacement: client('pva/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start real IOCs and client processes; on a 2-core
    // machine running files one at a time keeps timings meaningful.
    fileParallelism: false,
    globalSetup: ['test/global-setup.ts'],
    // No test searches the host's own networks: a test that names no address list searches
    // nowhere rather than broadcasting there (test/integration/network.test.ts builds hosts of its own).
    env: { EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_AUTO_ADDR_LIST: 'NO' },
  },
});
