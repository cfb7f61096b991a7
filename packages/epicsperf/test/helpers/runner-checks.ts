// The checks every client's runner passes against the built-in IOC on one of its servers, at a
// small size: a snapshot with missing names, a monitor whose every sample is checked, arrays
// checked element by element (bench-runners.test.ts on softioc, bench-runners-node.test.ts on
// this project's server). The clients' checks run two at a time (the integration project's
// maxConcurrency): each is mostly a runner starting and a timeout waited out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc, type IocServer } from '../../src/ioc/index.js';
import { CLIENTS } from '../../src/clients/index.js';
import { runSnapshot } from '../../src/bench/snapshot.js';
import { runMonitor } from '../../src/bench/monitor.js';

export function runnerChecks(server: IocServer, python: () => string): void {
  describe(`on ${server}`, () => {
    let ioc: Ioc;
    beforeAll(async () => {
      ioc = await startIoc({ records: 20, rate: 10, arrayElements: 0, server });
    });
    afterAll(async () => {
      await ioc?.stop();
    });

    describe.concurrent.each(CLIENTS.map((c) => [c.name, c] as const))('runner %s', (_name, client) => {
      it.skipIf(!client.tasks.includes('snapshot'))(
        'snapshot: 20 counters, a string and an array answer with checked values, 3 missing names fail in about the timeout',
        async () => {
          const names = [
            ...ioc.counterNames().slice(0, 10),
            'TEST:NOPE1',
            ...ioc.counterNames().slice(10),
            'TEST:NOPE2',
            'TEST:NOPE3',
            'TEST:KIND:STRING',
            'TEST:KIND:ARR:DOUBLE',
          ];
          // A JVM loads the classes of its first search, connection and read within the timeout:
          // with the suite beside it, core-pva's took more than 1 s (1 of 22 answered in 1 s).
          const timeoutMs = client.runtime === 'java' ? 2000 : 1000;
          const run = await runSnapshot({ client, python: python(), env: ioc.env, names, timeoutMs });
          expect(run.error).toBeUndefined();
          expect(run.answered).toBe(22);
          expect(run.failed).toBe(3);
          expect(run.wrong).toBe(0);
          expect(run.rows.filter((r) => !r.ok).map((r) => r.name)).toEqual(['TEST:NOPE1', 'TEST:NOPE2', 'TEST:NOPE3']);
          const counters = run.rows.filter((x) => x.ok && x.name.startsWith('TEST:CALC'));
          expect(counters).toHaveLength(20);
          for (const r of counters) {
            expect(typeof r.value).toBe('number');
            expect(r.correct).toBe(true);
            if (r.severity !== undefined) expect(r.severity).toBe(1);
          }
          const byName = new Map(run.rows.map((r) => [r.name, r]));
          expect(byName.get('TEST:KIND:STRING')!.value).toBe('hello epics');
          expect(byName.get('TEST:KIND:ARR:DOUBLE')!.value).toEqual([0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25]);
          expect(run.wallMs!).toBeGreaterThan(timeoutMs - 100);
          // Bounded, not timed: a missing name must not hold the batch far past its timeout (a
          // loaded 2-core machine took 6 s for caget-procs and 8.8 s for pyepics once; a hang is 30 s).
          expect(run.wallMs!).toBeLessThan(12_000);
        },
      );

      it.skipIf(!client.tasks.includes('monitor'))('monitor: 20 counters x 10 samples, every sample checked', async () => {
        const run = await runMonitor({
          client,
          python: python(),
          env: ioc.env,
          names: ioc.counterNames(),
          samples: 10,
          rate: 10,
          iocMeter: ioc.meter,
          warmupMs: 200,
        });
        expect(run.error).toBeUndefined();
        expect(run.check!.samples).toBe(200);
        expect(run.check!.ok).toBe(true);
        expect(run.connectMs!).toBeGreaterThan(0);
        expect(run.peakRssMb!).toBeGreaterThan(1);
        expect(run.cpuPercent?.samples.length ?? 0).toBeGreaterThanOrEqual(1);
      });
    });

    describe('array task', () => {
      let arrayIoc: Ioc;
      beforeAll(async () => {
        arrayIoc = await startIoc({ records: 1, rate: 0, arrayElements: 100_000, arrayRate: 20, server });
      });
      afterAll(async () => {
        await arrayIoc?.stop();
      });

      const arrayClients = CLIENTS.filter((c) => c.tasks.includes('array'));
      it.concurrent.each(arrayClients.map((c) => [c.name, c] as const))(
        '%s: 5 updates of 100,000 elements, every element checked, none corrupt',
        async (_name, client) => {
          const run = await runMonitor({
            task: 'array',
            client,
            python: python(),
            env: arrayIoc.env,
            names: [arrayIoc.prefix + 'ARRAY'],
            samples: 5,
            rate: 20,
            warmupMs: 200,
            array: { elements: 100_000, checkAll: true, iocStats: () => arrayIoc.stats() },
          });
          expect(run.error).toBeUndefined();
          expect(run.ok).toBe(true);
          expect(run.array!.updates).toBe(5);
          expect(run.array!.elements).toBe(100_000);
          expect(run.array!.corrupt).toBe(0);
          expect(run.array!.server!.updatesPerSecond).toBeGreaterThan(0);
        },
      );
    });
  });
}
