// The array-put workload against the built-in IOC: each putting client's arrays arrive and pass
// the IOC's own check of every element, length and order; PV Access clients cannot put without
// a reply and say so; the IOC's check catches a short array and one out of order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { CLIENTS, prepareClients } from '../../src/clients/index.js';
import { runArrayPut } from '../../src/bench/array-put.js';
import { Context } from '../../../client/src/index.js';
import { runCli } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';
import type { BenchResults } from '../../src/results/index.js';

const ELEMENTS = 100_000;
let python: string;
let ioc: Ioc;
beforeAll(async () => {
  // The runners build on first use (minutes for the Rust ones): the hook waits for them.
  python = await prepareClients(putters, true);
  ioc = await startIoc({ records: 1, rate: 0, arrayElements: ELEMENTS, arrayRate: 0, arrayType: 'int16', python });
}, 600_000);
afterAll(async () => {
  await ioc?.stop();
});

const putters = CLIENTS.filter((c) => c.tasks.includes('array-put'));

/**
 * Clients whose plain puts (CA WRITE, no completion) may reach the IOC out of order, and why. The
 * workload reports it (the IOC's check names each put that came after a later one); here every put
 * must still arrive whole, and the order be all the IOC finds.
 */
const REORDERS_PLAIN_PUTS: Record<string, string> = {
  // CATransport.submit sends a WRITE at once when it gets the send lock within 100 ms, else queues
  // it: on a loaded host a put queued behind a long send is overtaken by the next one.
  'java-caj': 'CAJ queues a plain WRITE when its send lock is held over 100 ms, and the next one can overtake it',
};

describe.each(putters.map((c) => [c.name, c] as const))('%s puts int16 arrays', (_name, client) => {
  it('with completion: 20 puts, each received and checked by the IOC', async () => {
    const run = await runArrayPut({
      client,
      python,
      env: ioc.env,
      name: 'TEST:ARRAY:PUT',
      workload: { elements: ELEMENTS, samples: 20, type: 'int16' },
      callback: true,
      ioc,
    });
    expect(run.error).toBeUndefined();
    expect(run.ok).toBe(true);
    expect(run.puts).toBe(20);
    expect(run.ioc).toMatchObject({ received: 20, elements: 20 * ELEMENTS, bad: 0 });
    expect(run.putsPerSecond!).toBeGreaterThan(0);
  });

  it('without completion: CA clients put and the IOC checks every one; PVA says it cannot', async () => {
    const run = await runArrayPut({
      client,
      python,
      env: ioc.env,
      name: 'TEST:ARRAY:PUT',
      workload: { elements: ELEMENTS, samples: 20, type: 'int16' },
      callback: false,
      ioc,
    });
    if (client.protocol === 'PVA') {
      expect(run.ok).toBe(false);
      expect(run.error).toMatch(/PV Access has no put without a reply/);
      return;
    }
    if (client.name in REORDERS_PLAIN_PUTS && run.ioc && run.ioc.bad > 0) {
      expect(run.ioc).toMatchObject({ received: 20, elements: 20 * ELEMENTS });
      for (const f of run.ioc.findings) expect(f).toMatch(/^put \d+ \(first element \d+\): came after \d+$/);
      return;
    }
    expect(run.error).toBeUndefined();
    expect(run.ioc).toMatchObject({ received: 20, bad: 0 });
  });
});

it("the IOC's check names a short put and one out of order", async () => {
  await ioc.resetPuts();
  const ctx = new Context({ env: ioc.env });
  try {
    await ctx.put('TEST:ARRAY:PUT', new Float64Array(ELEMENTS).fill(1));
    await ctx.put('TEST:ARRAY:PUT', new Float64Array(ELEMENTS - 1).fill(2));
    await ctx.put('TEST:ARRAY:PUT', new Float64Array(ELEMENTS).fill(7));
  } finally {
    await ctx.close();
  }
  let s = await ioc.stats();
  for (let i = 0; i < 50 && s.puts < 3; i++) {
    await new Promise((r) => setTimeout(r, 100));
    s = await ioc.stats();
  }
  expect(s.puts).toBe(3);
  expect(s.putBad).toBe(2);
  expect(s.putFindings).toEqual([
    `put 2 (first element 2): ${ELEMENTS - 1} elements, expected ${ELEMENTS}`,
    'put 3 (first element 7): came after 2',
  ]);
});

it('bench array-put: JSON that the schema accepts, a row per client and mode', async () => {
  const r = await runCli(
    [
      'bench',
      'array-put',
      '--clients',
      'c-libca,p4p',
      '--array-elements',
      '1000',
      '--array-samples',
      '5',
      '--array-type',
      'float',
      '--repeat',
      '1',
      '--no-keep',
      '--format',
      'json',
    ],
    { timeoutMs: 120_000 },
  );
  expect(r.code).toBe(0);
  const json = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', json)).toEqual([]);
  expect(json.arrayPut!.runs.map((x) => [x.client, x.callback, x.ok, x.ioc?.received ?? 0])).toEqual([
    ['c-libca', true, true, 5],
    ['c-libca', false, true, 5],
    ['p4p', true, true, 5],
    ['p4p', false, false, 0],
  ]);
}, 150_000);
