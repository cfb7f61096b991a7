// Access-rights changes reach a monitor's stream as events (CA's ACCESS_RIGHTS message), are never
// dropped by a full queue, and govern later puts. Against a fake server: the built-in IOC grants
// every client full access and has no access security file that could change it while connected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteWriter, encodeMessage } from '../src/ca/index.js';
import { AccessDeniedError, Context, type MonitorEvent } from '../src/index.js';
import { FakeNameServer, FakeTcpServer, type ServerCircuit } from './ca-fake-server.js';
import { waitFor } from './client-helpers.js';

const names = new FakeNameServer();
const server = new FakeTcpServer('good');
let ctx: Context;

beforeAll(async () => {
  await names.listen();
  await server.listen();
  names.names.set('FAKE:rights', server.port);
  ctx = new Context({ addrList: `127.0.0.1:${names.port}`, autoAddrList: false, env: {} });
});

afterAll(async () => {
  await ctx?.close();
  names.close();
  await server.close();
});

/** ACCESS_RIGHTS for every channel of a circuit (1 read, 2 write). */
function rights(r: number): (c: ServerCircuit) => Uint8Array {
  return (c) => {
    const w = new ByteWriter();
    for (const { cid } of c.sids.values()) encodeMessage(w, { type: 'AccessRightsResponse', cid, rights: r });
    return w.take();
  };
}

describe('access rights events', () => {
  it('a change arrives in the stream, survives a queue overflow, and a put is then refused', async () => {
    const m = ctx.monitor('FAKE:rights', { queueSize: 2 });
    await waitFor(() => m.active && m.updates >= 1, 5000, 'the subscription');
    server.broadcast(rights(1));
    for (let v = 1; v <= 6; v++) server.broadcast((c) => c.post(v));
    await waitFor(() => m.updates >= 7, 5000, 'six more updates');
    await expect(ctx.put('FAKE:rights', 5, { timeout: 1000 })).rejects.toBeInstanceOf(AccessDeniedError);
    server.broadcast(rights(3));
    server.broadcast((c) => c.post(7));
    await waitFor(() => m.updates >= 8, 5000, 'one more update');
    await ctx.put('FAKE:rights', 9, { timeout: 1000 });
    m.close();
    const seen: MonitorEvent[] = [];
    for await (const ev of m) seen.push(ev);
    const kinds = seen.map((e) => e.kind);
    expect(kinds[0]).toBe('connected');
    expect(seen[0]).toMatchObject({ readAccess: true, writeAccess: true });
    const access = seen.filter((e) => e.kind === 'access');
    expect(access).toEqual([
      { kind: 'access', name: 'FAKE:rights', readAccess: true, writeAccess: false },
      { kind: 'access', name: 'FAKE:rights', readAccess: true, writeAccess: true },
    ]);
    expect(m.overruns).toBeGreaterThan(0);
  });

  it('the same rights again are no event', async () => {
    const events: MonitorEvent[] = [];
    const m = ctx.monitor('FAKE:rights', {}, (ev) => events.push(ev));
    await waitFor(() => m.active && m.updates >= 1, 5000, 'the subscription');
    server.broadcast(rights(3));
    server.broadcast((c) => c.post(11));
    await waitFor(() => m.updates >= 2, 5000, 'one more update');
    m.close();
    expect(events.filter((e) => e.kind === 'access')).toEqual([]);
  });
});
