// Every client's runner against the built-in IOC served by this project's server (`server:
// 'node'`, epics-client/server) instead of softioc: the same checks as bench-runners.test.ts
// (helpers/runner-checks.ts), so that every client reads, monitors and checks its PVs.
import { beforeAll } from 'vitest';
import { CLIENTS, prepareClients } from '../../src/clients/index.js';
import { runnerChecks } from '../helpers/runner-checks.js';

let python: string;
beforeAll(async () => {
  python = await prepareClients(CLIENTS, true);
});

runnerChecks('node', () => python);
