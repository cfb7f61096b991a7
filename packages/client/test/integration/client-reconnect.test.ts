// Reconnection: the IOC is stopped and started again on the same ports during a monitor; the
// monitor reports the gap (disconnected, then connected) and resumes with fresh updates, at once
// after a long outage too (the restarted IOC's beacons restart the search).
import { afterAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc, freePort } from 'epicsperf-testkit/ioc';
import { DisconnectedError, NotFoundError, type MonitorEvent } from '../../src/index.js';
import { contextFor, waitFor } from 'epicsperf-testkit/client-helpers';

let ioc: Ioc | undefined;

afterAll(async () => {
  await ioc?.stop();
});

describe('reconnection', () => {
  it('a monitor sees the IOC go away and come back, and resumes', async () => {
    ioc = await startIoc({ records: 5, rate: 20, arrayElements: 0 });
    const { caPort, pvaPort, env } = ioc;
    const ctx = contextFor(env);
    try {
      const events: MonitorEvent[] = [];
      const m = ctx.monitor('TEST:CALC1', {}, (ev) => events.push(ev));
      const updates = (): number => events.filter((e) => e.kind === 'update').length;
      await waitFor(() => updates() >= 3, 5000, 'first updates');

      await ioc.stop();
      ioc = undefined;
      await waitFor(() => events.some((e) => e.kind === 'disconnected'), 5000, 'the disconnect');
      const before = updates();
      // While the IOC is down, a get of the channel fails (not a hang, not a crash).
      await expect(ctx.get('TEST:CALC1', { timeout: 200 })).rejects.toBeInstanceOf(DisconnectedError);
      await expect(ctx.get('TEST:CALC5', { timeout: 200 })).rejects.toBeInstanceOf(NotFoundError);

      ioc = await startIoc({ records: 5, rate: 20, arrayElements: 0, caPort, pvaPort });
      const disc = events.findIndex((e) => e.kind === 'disconnected');
      await waitFor(() => events.slice(disc).some((e) => e.kind === 'connected'), 15000, 'the reconnect');
      await waitFor(() => updates() >= before + 3, 5000, 'updates after the reconnect');
      m.close();

      const kinds = events.map((e) => e.kind).filter((k, i, a) => k !== 'update' || a[i - 1] !== 'update');
      expect(kinds).toEqual(['connected', 'update', 'disconnected', 'connected', 'update']);
      // Updates resume on the new IOC and step by 1 again (its counter started afresh).
      const ups = events.filter((e) => e.kind === 'update') as Array<{ value: number }>;
      const after = ups.slice(before);
      expect(after.length).toBeGreaterThanOrEqual(3);
      for (let i = 2; i < after.length; i++) expect(after[i]!.value).toBe(after[i - 1]!.value + 1);
      // And ordinary reads work again on the new circuit.
      expect((await ctx.get('TEST:CALC1')).value).toEqual(expect.any(Number));
    } finally {
      await ctx.close();
    }
  }, 40_000);

  it('after an outage longer than the search backoff, beacons bring CA and PVA monitors back at once', async () => {
    const caPort = await freePort({ tcp: true, udp: true });
    const pvaPort = await freePort({ tcp: true, udp: true }, new Set([caPort - 1, caPort, caPort + 1]));
    ioc = await startIoc({ records: 5, rate: 20, arrayElements: 0, caPort, pvaPort });
    const ctx = contextFor(ioc.env);
    try {
      const last = new Map<string, number>();
      const names = ['TEST:CALC1', 'TEST:CALC2', 'pva://TEST:CALC3', 'pva://TEST:CALC4'];
      for (const n of names) ctx.monitor(n, {}, (ev) => void (ev.kind === 'update' && last.set(n, Date.now())));
      await waitFor(() => last.size === names.length, 5000, 'first updates');
      await ioc.stop();
      // By now a name's next search is many seconds away (CA's backoff reaches 16 s, PVA's 12.8 s).
      await new Promise((r) => setTimeout(r, 20_000));
      ioc = await startIoc({ records: 5, rate: 20, arrayElements: 0, caPort, pvaPort });
      const answered = Date.now();
      await waitFor(() => names.every((n) => last.get(n)! > answered), 10_000, 'every monitor resumed');
      const after = Math.max(...names.map((n) => last.get(n)!)) - answered;
      expect(after).toBeLessThan(2000);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
