// Hostile and broken PV Access servers (a fake on 127.0.0.1, found through
// EPICS_PVA_NAME_SERVERS): an unknown command is skipped; a truncated message, an absurd size
// and a reference to a type id never defined are protocol errors that close that connection
// cleanly; a server that cuts off or goes silent gives a disconnect; one that closes every
// connection before validating it is connected to again only after a pause; the context carries on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { Context, DisconnectedError, EpicsError, ProtocolError, TimeoutError, type PvaMonitorOptions } from '../../src/index.js';
import { FakePvaServer } from '../helpers/pva-fake-server.js';

const server = new FakePvaServer();
let ctx: Context<'pva'>;

beforeAll(async () => {
  await server.listen();
  ctx = new Context({
    env: { EPICS_PVA_ADDR_LIST: '', EPICS_PVA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_NAME_SERVERS: `127.0.0.1:${server.port}` },
    protocol: 'pva',
    pvaConnTimeout: 0.4,
  });
});

afterAll(async () => {
  await ctx?.close();
  await server.close();
});

describe('hostile PVA server', () => {
  it('the fake works: validation, TCP search, create, GET', async () => {
    expect((await ctx.get('FAKE:good', { timeout: 2000 })).value).toBe(42.5);
  });

  it('an unknown command is skipped, the reply after it is used', async () => {
    expect((await ctx.get('FAKE:unknown', { timeout: 2000 })).value).toBe(42.5);
  });

  it.each(['truncated', 'oversized', 'badref'])('%s: a protocol error, and the context carries on', async (mode) => {
    const t0 = Date.now();
    const err = await ctx.get(`FAKE:${mode}`, { timeout: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(Date.now() - t0).toBeLessThan(1500);
    const why = {
      truncated: /malformed INIT reply: (truncated|1 fields cannot fit in 1 bytes)/,
      oversized: /exceeds the limit/,
      badref: /unknown type id 77/,
    }[mode]!;
    expect((err as Error).message).toMatch(why);
    // The same context still works (a new connection).
    expect((await ctx.get('FAKE:good', { timeout: 2000 })).value).toBe(42.5);
  });

  it('puts to one channel execute one kept PUT request; another pvRequest gets its own; closing the context destroys it', async () => {
    const c = new Context({ env: { EPICS_PVA_NAME_SERVERS: `127.0.0.1:${server.port}`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' }, protocol: 'pva' });
    const before = { ...server.requests.put };
    // What the server has seen once the client's last writes reached it.
    const seen = async () => {
      await new Promise((r) => setTimeout(r, 50));
      const p = server.requests.put;
      return { inits: p.inits - before.inits, executions: p.executions - before.executions, destroys: p.destroys - before.destroys };
    };
    for (let i = 0; i < 5; i++) await c.put('FAKE:good', i, { timeout: 2000 });
    expect(await seen()).toEqual({ inits: 1, executions: 5, destroys: 0 });
    // Two at once: the second INITs its own request, and destroys it after (one is kept).
    await Promise.all([c.put('FAKE:good', 1, { timeout: 2000 }), c.put('FAKE:good', 2, { timeout: 2000 })]);
    expect(await seen()).toEqual({ inits: 2, executions: 7, destroys: 1 });
    // Another pvRequest is not the kept one's.
    await c.put('FAKE:good', 3, { timeout: 2000, request: 'record[process=true]' });
    expect(await seen()).toEqual({ inits: 3, executions: 8, destroys: 2 });
    // A put that does not wait INITs its own request and destroys it; the kept one stays for the next.
    await c.put('FAKE:good', 4, { timeout: 2000, wait: false });
    await c.put('FAKE:good', 5, { timeout: 2000 });
    await c.close();
    expect(await seen()).toEqual({ inits: 4, executions: 10, destroys: 4 });
  });

  it('gets: a name read once INITs and ends its request with the reply; from the second get on, one kept GET request', async () => {
    const c = new Context({ env: { EPICS_PVA_NAME_SERVERS: `127.0.0.1:${server.port}`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' }, protocol: 'pva' });
    const g = server.requests.get;
    const before = { ...g };
    const seen = async () => {
      await new Promise((r) => setTimeout(r, 50));
      return { inits: g.inits - before.inits, executions: g.executions - before.executions, destroys: g.destroys - before.destroys };
    };
    expect((await c.get('FAKE:good', { timeout: 2000 })).value).toBe(42.5);
    expect(await seen()).toEqual({ inits: 1, executions: 1, destroys: 0 });
    for (let i = 0; i < 5; i++) expect((await c.get('FAKE:good', { timeout: 2000 })).value).toBe(42.5);
    expect(await seen()).toEqual({ inits: 2, executions: 6, destroys: 0 });
    // A snapshot reads each name once: it keeps nothing.
    await c.snapshot(['FAKE:good'], { timeout: 2000 });
    expect(await seen()).toEqual({ inits: 3, executions: 7, destroys: 0 });
    await c.close();
    expect(await seen()).toEqual({ inits: 3, executions: 7, destroys: 1 });
  });

  it("a pipelined monitor's INIT: a server queue as long as the window, or of 4 for values that hold arrays, or the pvRequest's", async () => {
    const inits = async (name: string, opts: PvaMonitorOptions, n: number) => {
      const seen = server.monitorInits.length;
      const m = ctx.monitor(name, opts, () => {});
      for (let i = 0; i < 100 && server.monitorInits.length < seen + n; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100)); // and no more
      m.close();
      return server.monitorInits.slice(seen).map(({ queueSize, pipeline, window }) => ({ queueSize, pipeline, window }));
    };
    expect(await inits('FAKE:good', {}, 1)).toEqual([{ queueSize: 16, pipeline: true, window: 16 }]);
    // An array: asked again, before START, with the shorter queue and the same window.
    expect(await inits('FAKE:good:array', {}, 2)).toEqual([
      { queueSize: 16, pipeline: true, window: 16 },
      { queueSize: 4, pipeline: true, window: 16 },
    ]);
    // The pvRequest's queue, or a window no longer than 4, is kept.
    expect(await inits('FAKE:good:array', { pipelineSize: 8, request: 'field(value)record[queueSize=10]' }, 1)).toEqual([
      { queueSize: 10, pipeline: true, window: 8 },
    ]);
    expect(await inits('FAKE:good:array', { pipelineSize: 3 }, 1)).toEqual([{ queueSize: 3, pipeline: true, window: 3 }]);
  });

  it('a server that cuts off mid-message: the read fails cleanly on its timeout', async () => {
    const err = await ctx.get('FAKE:cutoff', { timeout: 800 }).catch((e: unknown) => e);
    // Each cut-off connection is found again and cut off again: disconnected or timed out.
    expect([DisconnectedError, TimeoutError].some((c) => err instanceof c)).toBe(true);
    expect((await ctx.get('FAKE:good', { timeout: 2000 })).value).toBe(42.5);
  });

  it('a server that closes every connection before validating it is not connected to again at once', async () => {
    // (pvxs does this to a TLS client without a certificate where it requires one.)
    let accepted = 0;
    const closer = net.createServer((s) => {
      accepted++;
      s.destroy();
    });
    await new Promise<void>((r) => closer.listen(0, '127.0.0.1', r));
    server.elsewhere = (closer.address() as net.AddressInfo).port;
    try {
      await expect(ctx.get('FAKE:elsewhere', { timeout: 2000 })).rejects.toBeInstanceOf(EpicsError);
      // The pause doubles from 250 ms: a handful in 2 s, where searching again at once made hundreds.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(10);
    } finally {
      server.elsewhere = undefined;
      await new Promise<void>((r) => closer.close(() => r()));
    }
  });

  it('a silent server is found out by the echo watchdog (EPICS_PVA_CONN_TMO)', async () => {
    const err = await ctx.get('FAKE:silent', { timeout: 1500 }).catch((e: unknown) => e);
    expect([DisconnectedError, TimeoutError].some((c) => err instanceof c)).toBe(true);
  });
});
