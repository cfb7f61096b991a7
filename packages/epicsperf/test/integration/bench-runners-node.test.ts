// Every client's runner against the built-in IOC served by this project's server (`server:
// 'node'`, epics-client/server) instead of softioc: the same checks as bench-runners.test.ts
// (helpers/runner-checks.ts), so that every client reads, monitors and checks its PVs; and every
// putting client's array puts, each checked by the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { CLIENTS, prepareClients } from '../../src/clients/index.js';
import { runArrayPut } from '../../src/bench/array-put.js';
import { runnerChecks } from '../helpers/runner-checks.js';

let python: string;
beforeAll(async () => {
  // The runners build on first use (minutes for the Rust ones): the hook waits for them.
  python = await prepareClients(CLIENTS, true);
}, 600_000);

runnerChecks('node', () => python);

describe('every putting client puts arrays to the Node server', () => {
  const putters = CLIENTS.filter((x) => x.tasks.includes('array-put'));
  let arrays: Ioc;
  beforeAll(async () => {
    arrays = await startIoc({ records: 1, rate: 0, arrayElements: 10_000, arrayRate: 0, arrayType: 'int16', server: 'node', python });
  }, 120_000);
  afterAll(async () => {
    await arrays?.stop();
  });

  it.each(putters.map((x) => [x.name, x] as const))('%s: 5 puts with completion, each checked by the server', async (_name, client) => {
    const run = await runArrayPut({
      client,
      python,
      env: arrays.env,
      name: 'TEST:ARRAY:PUT',
      workload: { elements: 10_000, samples: 5, type: 'int16' },
      callback: true,
      ioc: arrays,
    });
    expect(run.error).toBeUndefined();
    expect(run.ioc).toMatchObject({ received: 5, elements: 50_000, bad: 0 });
  });
});
