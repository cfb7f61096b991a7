// Channel Access through a name server alone (EPICS_CA_NAME_SERVERS, here the IOC's own RSRV on
// loopback): no address list, no automatic list, so the client uses no UDP at all; get, monitor,
// snapshot with a missing name, stats; then the IOC restarts on the same ports and the name
// server connection, and the monitor, come back by themselves. pyepics (libca) alike.
import dgram from 'node:dgram';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import { Context, NotFoundError, type MonitorEvent } from '../../src/index.js';
import { pythonJson } from 'epicsperf-testkit/python';
import { waitFor } from 'epicsperf-testkit/client-helpers';

let ioc: Ioc | undefined;

afterAll(async () => {
  vi.restoreAllMocks();
  await ioc?.stop();
});

const OPTS = { records: 5, rate: 20, arrayElements: 0 };

describe('CA name servers', () => {
  it('finds names over TCP alone, with no UDP, and recovers when the IOC restarts', async () => {
    ioc = await startIoc(OPTS);
    const { caPort, pvaPort } = ioc;
    // UDP sockets the client makes, outside startIoc() (whose probe reads a PV with a Context of
    // its own, over UDP).
    const sockets: string[] = [];
    const create = dgram.createSocket.bind(dgram) as (...a: unknown[]) => dgram.Socket;
    vi.spyOn(dgram, 'createSocket').mockImplementation(((...a: unknown[]) => {
      const stack = new Error().stack ?? '';
      if (stack.includes('packages/client/src')) sockets.push(stack);
      return create(...a);
    }) as typeof dgram.createSocket);
    const server = `127.0.0.1:${caPort}`;
    const ctx = new Context({ addrList: [], autoAddrList: false, caNameServers: [server], env: {} });
    try {
      expect(ctx.config.nameServers).toEqual([{ host: '127.0.0.1', port: caPort }]);
      expect(ctx.config.searchDestinations).toEqual([]);
      const r = await ctx.get('TEST:CALC1', { timeout: 5000 });
      expect(r.value).toEqual(expect.any(Number));

      const events: MonitorEvent[] = [];
      const m = ctx.monitor('TEST:CALC2', {}, (ev) => events.push(ev));
      const updates = (): number => events.filter((e) => e.kind === 'update').length;
      await waitFor(() => updates() >= 3, 5000, 'first updates');

      const t0 = performance.now();
      const res = await ctx.snapshot(['TEST:CALC3', 'TEST:NO:SUCH:PV', 'TEST:CALC4'], { timeout: 600 });
      const took = performance.now() - t0;
      expect(res[0]).toMatchObject({ ok: true });
      expect(res[1]).toMatchObject({ ok: false, code: 'ERR_EPICS_NOT_FOUND' });
      expect((res[1] as { error: unknown }).error).toBeInstanceOf(NotFoundError);
      expect(res[2]).toMatchObject({ ok: true });
      expect(took).toBeGreaterThanOrEqual(500);
      expect(took).toBeLessThan(3000);

      const s = ctx.stats();
      expect(s.nameServers).toHaveLength(1);
      const ns = s.nameServers[0]!;
      expect(ns).toMatchObject({ server, connected: true });
      // Four names found (CALC1-4; a busy host may see a name retried, and answered twice, before
      // its first answer), the missing one searched and retried.
      expect(ns.answers).toBeGreaterThanOrEqual(4);
      expect(ns.searchesSent).toBeGreaterThanOrEqual(ns.answers + 2);
      expect(s.datagramsSent).toBe(0);
      expect(s.searchDestinations).toEqual([]);
      // No UDP socket at all: no search socket, no beacon listener (nor repeater registration).
      expect(sockets).toEqual([]);

      await ioc.stop();
      ioc = undefined;
      await waitFor(() => events.some((e) => e.kind === 'disconnected'), 5000, 'the disconnect');
      await waitFor(() => !ctx.stats().nameServers[0]!.connected, 5000, 'the name server seen gone');
      const before = updates();
      const answersBefore = ctx.stats().nameServers[0]!.answers;

      ioc = await startIoc({ ...OPTS, caPort, pvaPort });
      sockets.length = 0;
      const disc = events.findIndex((e) => e.kind === 'disconnected');
      await waitFor(() => events.slice(disc).some((e) => e.kind === 'connected'), 10_000, 'the reconnect');
      await waitFor(() => updates() >= before + 3, 5000, 'updates after the reconnect');
      m.close();
      const after = ctx.stats().nameServers[0]!;
      expect(after.connected).toBe(true);
      expect(after.answers).toBeGreaterThan(answersBefore);
      expect((await ctx.get('TEST:CALC5', { timeout: 5000 })).value).toEqual(expect.any(Number));
      expect(sockets).toEqual([]);
      expect(ctx.stats().datagramsSent).toBe(0);
    } finally {
      await ctx.close();
    }
  }, 60_000);

  it('pyepics (libca) finds the same names through EPICS_CA_NAME_SERVERS alone', async () => {
    ioc ??= await startIoc(OPTS);
    const script = String.raw`
import json, sys
from epics import ca
out = {}
for name in sys.argv[1:]:
    chid = ca.create_channel(name, connect=False, auto_cb=False)
    out[name] = ca.get(chid, timeout=3.0) if ca.connect_channel(chid, timeout=3.0) else None
print(json.dumps(out))
`;
    const got = await pythonJson<Record<string, number | null>>(script, ['TEST:CALC1', 'TEST:NO:SUCH:PV'], {
      ...ioc.env,
      EPICS_CA_ADDR_LIST: '',
      EPICS_CA_AUTO_ADDR_LIST: 'NO',
      EPICS_CA_NAME_SERVERS: `127.0.0.1:${ioc.caPort}`,
    });
    expect(got['TEST:CALC1']).toEqual(expect.any(Number));
    expect(got['TEST:NO:SUCH:PV']).toBeNull();
    const ctx = new Context({ addrList: [], autoAddrList: false, caNameServers: `127.0.0.1:${ioc.caPort}`, env: {} });
    try {
      expect((await ctx.get('TEST:CALC1', { timeout: 5000 })).value).toEqual(expect.any(Number));
    } finally {
      await ctx.close();
    }
  }, 40_000);
});
