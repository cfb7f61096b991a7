// The servers' headroom (`bench headroom --servers`): a server's step judged from its clients' and
// its own published rate; the rows of --servers by protocol and fan-out; --headroom-fanout.
import { describe, expect, it } from 'vitest';
import { headroomStep } from '../../src/bench/headroom.js';
import { judgeServer, serverRowLabel } from '../../src/bench/server-headroom.js';
import { findClient } from '../../src/clients/index.js';
import type { HeadroomStepResult } from '../../src/results/index.js';
import { parseFanout, serverRows } from '../../src/workloads/headroom.js';

const step = headroomStep(1000, 10);
const server = { name: 'node', protocol: 'CA' as const, fanout: 2 };
const client = (held: boolean, iocUpdatesS: number | undefined, text = 'lost 5 updates in 1 gaps'): HeadroomStepResult => ({
  client: 'node (CA) x 2',
  step,
  run: { client: 'c-libca', ok: held },
  held,
  iocLimited: true,
  ...(iocUpdatesS !== undefined && { iocUpdatesS }),
  ...(!held && { failure: { mode: 'lost' as const, text } }),
});

describe('judgeServer', () => {
  it('held when every client held and the app posted at least 90% of the offered rate', () => {
    const r = judgeServer([client(true, 9_950), client(true, 9_950)], server, { done: 40, asked: 40.5 });
    expect(r.held).toBe(true);
    expect(r.server).toEqual(server);
    // The server is what is measured: never "IOC-limited".
    expect(r.iocLimited).toBe(false);
  });

  it('an app that posted short of the rate gave way, though its clients received all it posted', () => {
    const r = judgeServer([client(true, 8_000)], server, { done: 32, asked: 40 });
    expect(r.held).toBe(false);
    expect(r.failure).toEqual({ mode: 'short', text: 'posted 8,000 of 10,000 updates/s' });
  });

  it('one tick of slack: the window of a short step ends between ticks', () => {
    // 4 of 5 ticks asked (80%) is within one tick; 3 of 5 is not.
    expect(judgeServer([client(true, 8_000)], server, { done: 4, asked: 5 }).held).toBe(true);
    expect(judgeServer([client(true, 6_000)], server, { done: 3, asked: 5 }).held).toBe(false);
  });

  it("one client that did not hold makes the row's step, with that client's run", () => {
    const r = judgeServer([client(true, 10_000), client(false, 10_000, 'lost 7 updates in 7 gaps')], server, { done: 40, asked: 40 });
    expect(r.held).toBe(false);
    expect(r.failure?.text).toBe('lost 7 updates in 7 gaps');
  });
});

describe('the rows of --servers', () => {
  it('each protocol a server serves that a reference client speaks, at each fan-out', () => {
    const ready = ['c-libca', 'c-pvxs', 'pyepics'].map((n) => findClient(n)!);
    const rows = serverRows({ seconds: 1, steps: [step], servers: { names: ['ioc', 'pvxs', 'caproto'], fanout: [1, 4] } }, ready);
    expect(rows.map((r) => `${serverRowLabel(r)} ${r.client.name}`)).toEqual([
      'ioc (CA) c-libca',
      'ioc (CA) x 4 c-libca',
      'ioc (PVA) c-pvxs',
      'ioc (PVA) x 4 c-pvxs',
      'pvxs (PVA) c-pvxs',
      'pvxs (PVA) x 4 c-pvxs',
      'caproto (CA) c-libca',
      'caproto (CA) x 4 c-libca',
    ]);
    // Without a PVA client, the PVA servers have no row.
    expect(serverRows({ seconds: 1, steps: [step], servers: { names: ['pvxs'], fanout: [1] } }, [findClient('c-libca')!])).toEqual([]);
  });

  it('--headroom-fanout: a rising list of client counts', () => {
    expect(parseFanout('1,4')).toEqual([1, 4]);
    for (const bad of ['4,1', '0', '1,1', 'x', '65']) expect(() => parseFanout(bad)).toThrow(/not a rising list/);
  });
});
