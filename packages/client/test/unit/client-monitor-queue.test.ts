// The iterator form's bounded queue: when it overflows the oldest value goes (counted as an
// overrun); connected, disconnected and error events are never dropped. Against a fake server
// (the test needs a burst of updates while nobody reads, then a disconnect).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context, type MonitorEvent, type Reading } from '../../src/index.js';
import { FakeNameServer, FakeTcpServer } from '../helpers/ca-fake-server.js';
import { waitFor } from 'epicsperf-testkit/wait';

const names = new FakeNameServer();
const server = new FakeTcpServer('good');
let ctx: Context;

beforeAll(async () => {
  await names.listen();
  await server.listen();
  names.names.set('FAKE:queue', server.port);
  ctx = new Context({ addrList: `127.0.0.1:${names.port}`, autoAddrList: false, env: {} });
});

afterAll(async () => {
  await ctx?.close();
  names.close();
  await server.close();
});

describe('monitor queue', () => {
  it('an overflowing queue drops the oldest values, never the connection events', async () => {
    const m = ctx.monitor('FAKE:queue', { queueSize: 3 });
    await waitFor(() => m.active && m.updates >= 1, 5000, 'the subscription and its first update');
    for (let v = 1; v <= 10; v++) server.broadcast((c) => c.post(v));
    await waitFor(() => m.updates >= 11, 5000, 'ten more updates');
    // The server goes away and cannot be found again: the channel stays disconnected.
    names.names.delete('FAKE:queue');
    for (const s of server.sockets) s.destroy();
    await waitFor(() => !m.active, 5000, 'the disconnect');
    m.close();
    const seen: MonitorEvent[] = [];
    for await (const ev of m) seen.push(ev);
    expect(seen.map((e) => e.kind)).toEqual(['connected', 'update', 'disconnected']);
    expect((seen[1] as Reading).value).toBe(10);
    expect(m.overruns).toBe(10);
  });
});
