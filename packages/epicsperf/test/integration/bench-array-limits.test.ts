// The array workload's edges against the real IOC: updates the IOC skips on purpose are counted
// exactly in the row, and an array past the client's EPICS_CA_MAX_ARRAY_BYTES ends the row with
// an error that says why (never a hang).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { Context } from '../../../client/src/client/context.js';
import { findClient, prepareClients } from '../../src/clients/index.js';
import { runMonitor } from '../../src/bench/monitor.js';

let python: string;
beforeAll(async () => {
  python = await prepareClients(
    ['node', 'c-libca', 'pyepics', 'p4p', 'java-caj'].map((n) => findClient(n)!),
    true,
  );
});

describe('skipped updates injected by the IOC', () => {
  // A slow array (5 updates/s of 1000 elements) no client falls behind on: every update the IOC
  // publishes reaches the client, so the skipped count is exactly what the test injected.
  const RATE = 5;
  let ioc: Ioc;
  let ctx: Context;
  beforeAll(async () => {
    ioc = await startIoc({ records: 1, rate: 0, arrayElements: 1000, arrayRate: RATE, arrayType: 'int32', python });
    ctx = new Context({ env: ioc.env });
  });
  afterAll(async () => {
    await ctx?.close();
    await ioc?.stop();
  });

  it.each(['node', 'pyepics', 'p4p'])('%s: the row counts the 3 + 5 values the IOC skipped', async (name) => {
    // 30 updates take 6 s at 5/s; the two gaps go in 1 s and 2 s after the client connected,
    // each after at least one update (the IOC applies a skip at its next update).
    const injected: Promise<void>[] = [];
    let complete = false;
    const run = await runMonitor({
      task: 'array',
      client: findClient(name)!,
      python,
      env: ioc.env,
      names: [ioc.prefix + 'ARRAY'],
      samples: 30,
      rate: RATE,
      warmupMs: 200,
      array: { elements: 1000, type: 'int32' },
      onProgress: (text) => {
        if (text.startsWith('collecting') && injected.length === 0) {
          injected.push(
            (async () => {
              await sleep(1000);
              await ctx.put(ioc.prefix + 'ARRAY:SKIP', 3);
              await sleep(1000);
              await ctx.put(ioc.prefix + 'ARRAY:SKIP', 5);
              // The second gap must land inside the run for the count to be exact.
              expect(complete).toBe(false);
            })(),
          );
        }
        if (text.startsWith('checking')) complete = true;
      },
    });
    expect(injected).toHaveLength(1);
    await injected[0];
    expect(run.error).toBeUndefined();
    expect(run.array!.updates).toBe(30);
    expect(run.array!.corrupt).toBe(0);
    expect(run.array!.valueErrors).toBe(0);
    expect(run.array!.repeats).toBe(0);
    expect(run.array!.skipped).toBe(8);
  });
});

describe('an array larger than EPICS_CA_MAX_ARRAY_BYTES', () => {
  // 100,000 doubles (800 kB) against a client limit of 16 kB (the default a user gets when the
  // variable is unset, set here explicitly): the IOC serves it, the client must refuse clearly.
  // libca (since base 3.16) ignores the limit unless EPICS_CA_AUTO_ARRAY_BYTES=NO, so the test
  // sets that too; this project's client always holds to EPICS_CA_MAX_ARRAY_BYTES.
  let ioc: Ioc;
  beforeAll(async () => {
    ioc = await startIoc({ records: 1, rate: 0, arrayElements: 100_000, arrayRate: 5, arrayType: 'double', python });
  });
  afterAll(async () => {
    await ioc?.stop();
  });

  it.each(['node', 'c-libca', 'pyepics', 'java-caj'])(
    '%s: the row fails with an error naming the limit',
    async (name) => {
      const t0 = performance.now();
      const run = await runMonitor({
        task: 'array',
        client: findClient(name)!,
        python,
        env: { ...ioc.env, EPICS_CA_MAX_ARRAY_BYTES: '16384', EPICS_CA_AUTO_ARRAY_BYTES: 'NO' },
        names: [ioc.prefix + 'ARRAY'],
        samples: 5,
        rate: 5,
        warmupMs: 200,
        array: { elements: 100_000, type: 'double' },
      });
      expect(run.ok).toBe(false);
      expect(run.error).toMatch(/EPICS_CA_MAX_ARRAY_BYTES/);
      // It fails at once rather than waiting for the runner's deadlines (30 s and more).
      expect(performance.now() - t0).toBeLessThan(25_000);
    },
    60_000,
  );
});
