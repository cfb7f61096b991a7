// Hostile and broken servers (fakes on 127.0.0.1): a truncated message, an absurd payload size,
// an unknown command, garbage, a server that stops answering. Each gives a clear error on its
// own circuit; a good server's channels on another circuit carry on; nothing crashes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context, DisconnectedError, ProtocolError, TimeoutError, type Reading } from '../../src/index.js';
import { FakeNameServer, FakeTcpServer, type Mode } from '../helpers/ca-fake-server.js';
import { waitFor } from 'epicsperf-testkit/wait';

const modes: Mode[] = ['good', 'truncated', 'absurd', 'unknown', 'silent', 'garbage'];
const servers = new Map<Mode, FakeTcpServer>();
const names = new FakeNameServer();
let ctx: Context;

beforeAll(async () => {
  await names.listen();
  for (const m of modes) {
    const s = new FakeTcpServer(m);
    await s.listen();
    servers.set(m, s);
    names.names.set(`FAKE:${m}`, s.port);
    names.names.set(`FAKE:${m}:2`, s.port);
  }
  ctx = new Context({
    addrList: `127.0.0.1:${names.port}`,
    autoAddrList: false,
    connTimeout: 0.4,
    env: {},
  });
});

afterAll(async () => {
  await ctx?.close();
  names.close();
  for (const s of servers.values()) await s.close();
});

describe('hostile servers', () => {
  it('the good fake server works: get, put, monitor', async () => {
    const r = await ctx.get('FAKE:good', { timeout: 2000 });
    expect([r.value, r.severity, r.status, r.secondsPastEpoch, r.nanoseconds]).toEqual([42, 1, 3, 1000, 5]);
    await ctx.put('FAKE:good', 7.5);
    expect((await ctx.get('FAKE:good')).value).toBe(7.5);
  });

  it('an absurd payload size is a protocol error on that circuit only', async () => {
    const ups: number[] = [];
    const m = ctx.monitor('FAKE:good:2', {}, (ev) => ev.kind === 'update' && ups.push((ev as Reading).value as number));
    await waitFor(() => ups.length > 0, 2000, 'the good monitor');
    const err = await ctx.get('FAKE:absurd', { timeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toMatch(/4294967280 bytes.*exceeds/);
    // The good circuit is unaffected: its monitor still receives.
    servers.get('good')!.broadcast((c) => c.post(99));
    await waitFor(() => ups.includes(99), 2000, 'an update after the bad circuit died');
    m.close();
  });

  it('an unknown command is a protocol error', async () => {
    const err = await ctx.get('FAKE:unknown', { timeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toMatch(/unknown response command 99/);
  });

  it('a truncated message followed by silence times out; the server dropping it is a disconnect', async () => {
    const err = await ctx.get('FAKE:truncated', { timeout: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    // The next reply completes the truncated one (a lying server desynchronises the stream);
    // this read stays pending until the server drops the circuit.
    const pending = ctx.get('FAKE:truncated', { timeout: 3000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    for (const s of servers.get('truncated')!.sockets) s.destroy();
    expect(await pending).toBeInstanceOf(DisconnectedError);
  });

  it('garbage instead of CA is a protocol error, not a crash', async () => {
    const err = await ctx.get('FAKE:garbage', { timeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
  });

  it('a server that stops answering is declared unresponsive by the ECHO watchdog', async () => {
    const events: string[] = [];
    const m = ctx.monitor('FAKE:silent', {}, (ev) => events.push(ev.kind));
    await waitFor(() => events.includes('update'), 2000, 'the first update');
    // connTimeout 0.4 s: an ECHO after 0.4 s of silence, unanswered for 0.4 s more.
    await waitFor(() => events.includes('disconnected'), 4000, 'the watchdog');
    m.close();
    expect((await ctx.get('FAKE:good', { timeout: 1000 })).value).toEqual(expect.any(Number));
  });

  it('a malformed search reply is ignored', async () => {
    const raw = new FakeNameServer();
    await raw.listen();
    raw.rawReply = new Uint8Array([0, 6, 0, 200, 1, 2, 3]);
    const c = new Context({ addrList: `127.0.0.1:${raw.port}`, autoAddrList: false, env: {} });
    try {
      await expect(c.get('ANY', { timeout: 200 })).rejects.toMatchObject({ code: 'ERR_EPICS_NOT_FOUND' });
    } finally {
      await c.close();
      raw.close();
    }
  });
});
