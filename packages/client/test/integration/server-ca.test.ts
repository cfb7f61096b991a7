// The CA server in TypeScript, read by this library's own CA client over loopback: get in every
// form, put (plain and notified, accepted, changed and refused by the app), monitors with their
// masks, a missing name, and a dynamic name from the source.
import dgram from 'node:dgram';
import diagnostics from 'node:diagnostics_channel';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/index.js';
import { ByteWriter, CA_MINOR_PROTOCOL_REVISION, DbrType, DONT_REPLY, encodeMessage } from '../../src/ca/index.js';
import { Server, type ServedPv } from '../../src/server/index.js';
import { pythonJson } from 'epicsperf-testkit/python';

let server: Server;
let ctx: Context;
let counter: ServedPv;

beforeAll(async () => {
  server = await Server.start({
    ca: { port: 0, host: '127.0.0.1', beaconAddresses: [] },
    source: (name) => (name.startsWith('DYN:') ? { type: DbrType.DOUBLE, value: name.length } : undefined),
  });
  counter = server.pv('T:COUNTER', { value: 1.5, metadata: { units: 'mm', precision: 2, upperDisplayLimit: 10 } });
  server.pv('T:NAME', { value: 'hello' });
  server.pv('T:MODE', { type: DbrType.ENUM, value: 1, metadata: { enumStrings: ['Off', 'On'] } });
  server.pv('T:WAVE', { value: new Float64Array([1, 2, 3]), maxCount: 10 });
  server.pv('T:RO', { value: 7, readOnly: true });
  const guarded = server.pv('T:GUARDED', { value: 0 });
  guarded.onPut = async ({ value }) =>
    Number(value) > 100 ? { accept: false, message: 'too large' } : { accept: true, value: Number(value) * 2 };
  ctx = new Context({ addrList: ['127.0.0.1'], autoAddrList: false, serverPort: server.caPort, env: {} });
});

afterAll(async () => {
  await ctx?.close();
  await server?.close();
});

describe('the CA server', () => {
  it('serves scalars, strings, enums and arrays with their alarm, time and metadata', async () => {
    const r = await ctx.get('T:COUNTER', { form: 'ctrl' });
    expect(r.value).toBe(1.5);
    expect(r.metadata?.units).toBe('mm');
    expect(r.metadata?.precision).toBe(2);
    expect(r.metadata?.upperDisplayLimit).toBe(10);
    expect((await ctx.get('T:NAME')).value).toBe('hello');
    const mode = await ctx.get('T:MODE', { form: 'ctrl' });
    expect(mode.value).toBe(1);
    expect(mode.metadata?.enumStrings).toEqual(['Off', 'On']);
    expect((await ctx.get('T:MODE', { type: 'string' })).value).toBe('On');
    expect(Array.from((await ctx.get('T:WAVE')).value as Float64Array)).toEqual([1, 2, 3]);
    counter.post(2.5, { severity: 1, status: 3, timestamp: new Date('2026-01-02T03:04:05.500Z') });
    const t = await ctx.get('T:COUNTER', { form: 'time' });
    expect([t.value, t.severity, t.status]).toEqual([2.5, 1, 3]);
    expect(t.timestamp?.toISOString()).toBe('2026-01-02T03:04:05.500Z');
  });

  it('a name it does not have is not found; a source makes names on demand', async () => {
    await expect(ctx.get('T:MISSING', { timeout: 500 })).rejects.toThrow();
    expect((await ctx.get('DYN:ABC')).value).toBe(7);
  });

  it('puts: accepted, changed and refused by the app; read-only refused', async () => {
    await ctx.put('T:COUNTER', 4.25);
    expect((await ctx.get('T:COUNTER')).value).toBe(4.25);
    await ctx.put('T:GUARDED', 21);
    expect((await ctx.get('T:GUARDED')).value).toBe(42);
    await expect(ctx.put('T:GUARDED', 1000)).rejects.toThrow();
    expect((await ctx.get('T:GUARDED')).value).toBe(42);
    await expect(ctx.put('T:RO', 1)).rejects.toThrow();
  });

  it('monitors get the current value, then each post', async () => {
    const seen: number[] = [];
    const m = ctx.monitor('T:COUNTER', {}, (e) => {
      if (e.kind === 'update') seen.push(e.value as number);
    });
    await new Promise((r) => setTimeout(r, 200));
    for (const v of [10, 11, 12]) counter.post(v);
    await new Promise((r) => setTimeout(r, 200));
    m.close();
    expect(seen.slice(-3)).toEqual([10, 11, 12]);
    expect(seen.length).toBe(4);
  });

  it('deadbands: value subscribers get changes past the monitor deadband, archive ones past the archive deadband', async () => {
    const pv = server.pv('T:BANDED', { value: 0, valueDeadband: 1, archiveDeadband: 5 });
    const got: Record<string, number[]> = { value: [], archive: [] };
    const ms = (['value', 'archive'] as const).map((k) =>
      ctx.monitor('T:BANDED', { mask: k === 'value' ? { value: true } : { log: true } }, (e) => {
        if (e.kind === 'update') got[k]!.push(e.value as number);
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    for (const v of [0.5, 1.5, 2, 3, 7, 7.5, 13]) pv.post(v);
    await new Promise((r) => setTimeout(r, 200));
    for (const m of ms) m.close();
    expect(got.value).toEqual([0, 1.5, 3, 7, 13]);
    expect(got.archive).toEqual([0, 7, 13]);
  });

  it('access rights follow the PV (read-only set and cleared), and a PV no longer served disconnects its channels', async () => {
    const pv = server.pv('T:LOCKABLE', { value: 1 });
    const events: string[] = [];
    const m = ctx.monitor('T:LOCKABLE', {}, (e) => {
      if (e.kind === 'access') events.push(e.writeAccess ? 'rw' : 'ro');
      if (e.kind === 'disconnected') events.push('gone');
    });
    await new Promise((r) => setTimeout(r, 200));
    pv.readOnly = true;
    await new Promise((r) => setTimeout(r, 100));
    await expect(ctx.put('T:LOCKABLE', 2)).rejects.toThrow(/access/i);
    pv.readOnly = false;
    await new Promise((r) => setTimeout(r, 100));
    await ctx.put('T:LOCKABLE', 3);
    expect(server.remove('T:LOCKABLE')).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    m.close();
    expect(events).toEqual(['ro', 'rw', 'gone']);
  });

  it('an access rule by who the client says it is: write, read only, none; asked again after refreshAccess()', async () => {
    let viewerMay: 'read' | 'write' = 'read';
    const pv = server.pv('T:RULED', {
      value: 1,
      access: (peer) => (peer.host === 'console-1' ? 'write' : peer.host === 'viewer' ? viewerMay : 'none'),
    });
    const as = (hostName: string) =>
      new Context({ addrList: ['127.0.0.1'], autoAddrList: false, serverPort: server.caPort, env: {}, hostName });
    const [console1, viewer, other] = [as('console-1'), as('viewer'), as('other')];
    try {
      await console1.put('T:RULED', 2);
      expect((await viewer.get('T:RULED')).value).toBe(2);
      await expect(viewer.put('T:RULED', 3)).rejects.toThrow(/access/i);
      expect(await viewer.info('T:RULED')).toMatchObject({ readAccess: true, writeAccess: false });
      expect(await other.info('T:RULED')).toMatchObject({ readAccess: false, writeAccess: false });
      await expect(other.get('T:RULED', { timeout: 2000 })).rejects.toThrow(/read access/i);
      const events: boolean[] = [];
      const m = viewer.monitor('T:RULED', {}, (e) => {
        if (e.kind === 'access') events.push(e.writeAccess);
      });
      await new Promise((r) => setTimeout(r, 200));
      viewerMay = 'write';
      pv.refreshAccess();
      await new Promise((r) => setTimeout(r, 200));
      m.close();
      expect(events).toEqual([true]);
      await viewer.put('T:RULED', 4);
      expect(pv.state.value).toBe(4);
    } finally {
      await Promise.all([console1, viewer, other].map((c) => c.close()));
    }
  });

  it('a read larger than EPICS_CA_MAX_ARRAY_BYTES is refused, the circuit stays up', async () => {
    server.pv('T:BIG', { value: new Float64Array(4096) }); // 32 KB, over the 16 KB default
    await expect(ctx.get('T:BIG', { timeout: 2000 })).rejects.toThrow();
    expect((await ctx.get('T:NAME')).value).toBeDefined();
  });

  it('a malformed message closes that circuit only, with one log line; 200 clients opened and dropped leave nothing held', async () => {
    const warns: string[] = [];
    const onWarn = (r: unknown) => warns.push((r as { msg: string }).msg);
    diagnostics.subscribe('epics-client:log:warn', onWarn);
    try {
      const sock = net.connect(server.caPort, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      const closed = new Promise((r) => sock.once('close', r));
      sock.on('error', () => {});
      // A header whose command is VERSION with an absurd extended payload size.
      sock.write(Buffer.from('0000ffff0000000000000000000000007fffffff00000000', 'hex'));
      await closed;
      expect(warns.filter((w) => /malformed/.test(w))).toHaveLength(1);
      expect((await ctx.get('T:NAME')).value).toBeDefined();
    } finally {
      diagnostics.unsubscribe('epics-client:log:warn', onWarn);
    }
    const before = counter.listeners;
    for (let i = 0; i < 200; i++) {
      const c = new Context({ addrList: ['127.0.0.1'], autoAddrList: false, serverPort: server.caPort, env: {} });
      const m = c.monitor('T:COUNTER', {}, () => {});
      await c.get('T:COUNTER');
      m.close();
      await c.close();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(counter.listeners).toBe(before);
  });

  it('libca (pyepics) gets, puts a string, monitors and reads the metadata', async () => {
    const env = { EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: String(server.caPort) };
    const ticker = setInterval(() => counter.post((counter.state.value as number) + 1), 50);
    try {
      const got = await pythonJson<{
        name: string;
        put: number;
        after: string;
        wave: number[];
        units: string;
        updates: number;
        steps: boolean;
      }>(
        `
import epics, json, time
name = epics.caget('T:NAME', timeout=5)
put = epics.caput('T:NAME', 'from libca', wait=True, timeout=5)
after = epics.caget('T:NAME', timeout=5, use_monitor=False)
wave = list(epics.caget('T:WAVE', timeout=5))
units = epics.PV('T:COUNTER', form='ctrl').get_ctrlvars(timeout=5)['units']
seen = []
pv = epics.PV('T:COUNTER', callback=lambda value=None, **k: seen.append(value))
time.sleep(1.0)
print(json.dumps(dict(name=name, put=put, after=after, wave=wave, units=units, updates=len(seen), steps=all(b - a == 1 for a, b in zip(seen, seen[1:])))))
`,
        [],
        env,
      );
      expect(got.name).toBe('hello');
      expect(got.put).toBe(1);
      expect(got.after).toBe('from libca');
      expect(got.wave).toEqual([1, 2, 3]);
      expect(got.units).toBe('mm');
      expect(got.updates).toBeGreaterThan(5);
      expect(got.steps).toBe(true);
    } finally {
      clearInterval(ticker);
    }
  });

  it('caproto (pure Python) gets, puts and monitors', async () => {
    server.pv('T:CAPROTO:S', { value: 'caproto' });
    const g = server.pv('T:CAPROTO:G', { value: 0 });
    g.onPut = ({ value }) => ({ accept: true, value: Number(value) * 2 });
    const env = { EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: String(server.caPort) };
    const ticker = setInterval(() => counter.post((counter.state.value as number) + 1), 50);
    try {
      const got = await pythonJson<{ name: string; wave: number[]; units: string; after: number; updates: number }>(
        `
import json, time
from caproto.threading.client import Context
from caproto import ChannelType
ctx = Context()
name, wave, counter, guarded = ctx.get_pvs('T:CAPROTO:S', 'T:WAVE', 'T:COUNTER', 'T:CAPROTO:G', timeout=5)
n = name.read(timeout=5).data[0].decode()
w = [float(x) for x in wave.read(timeout=5).data]
units = counter.read(data_type=ChannelType.CTRL_DOUBLE, timeout=5).metadata.units.decode()
guarded.write([7], wait=True, timeout=5)
after = float(guarded.read(timeout=5).data[0])
seen = []
def on_update(sub, response):  # caproto keeps callbacks by weak reference: a named function
    seen.append(float(response.data[0]))
sub = counter.subscribe()
sub.add_callback(on_update)
time.sleep(1.0)
print(json.dumps(dict(name=n, wave=w, units=units, after=after, updates=len(seen))))
`,
        [],
        env,
      );
      expect(got.name).toBe('caproto');
      expect(got.wave).toEqual([1, 2, 3]);
      expect(got.units).toBe('mm');
      expect(got.after).toBe(14);
      expect(got.updates).toBeGreaterThan(5);
    } finally {
      clearInterval(ticker);
    }
  });
});

describe('EPICS_CAS_INTF_ADDR_LIST', () => {
  /** The datagrams that answer one search for T:ON:BOTH sent to `host`:`port` (a group: on loopback), in 300 ms. */
  async function repliesTo(host: string, port: number): Promise<number> {
    const w = new ByteWriter();
    encodeMessage(w, { type: 'VersionRequest', priority: 0, version: CA_MINOR_PROTOCOL_REVISION });
    encodeMessage(w, { type: 'SearchRequest', name: 'T:ON:BOTH', cid: 1, version: CA_MINOR_PROTOCOL_REVISION, reply: DONT_REPLY });
    const u = dgram.createSocket('udp4');
    let n = 0;
    u.on('message', () => n++);
    await new Promise<void>((r) => u.bind(0, '127.0.0.1', r));
    u.setBroadcast(true);
    u.setMulticastInterface('127.0.0.1');
    u.send(w.take(), port, host);
    await new Promise((r) => setTimeout(r, 300));
    u.close();
    return n;
  }

  /** A server started with `list` as its interface list (the variable set only while it starts). */
  async function serveOn(list: string): Promise<Server> {
    const before = process.env.EPICS_CAS_INTF_ADDR_LIST;
    process.env.EPICS_CAS_INTF_ADDR_LIST = list;
    try {
      const s = await Server.start({ ca: { port: 0, beaconAddresses: [] }, pva: false });
      s.pv('T:ON:BOTH', { value: 5 });
      return s;
    } finally {
      if (before === undefined) delete process.env.EPICS_CAS_INTF_ADDR_LIST;
      else process.env.EPICS_CAS_INTF_ADDR_LIST = before;
    }
  }

  it('every address in it is served, its broadcast address heard once, a multicast group joined; other addresses not', async () => {
    const s = await serveOn('127.0.0.2 127.0.0.3 224.0.2.9');
    const at = (addr: string) => new Context({ addrList: [addr], autoAddrList: false, serverPort: s.caPort, env: {} });
    const contexts = ['127.0.0.2', '127.0.0.3', '127.255.255.255', '127.0.0.1'].map(at);
    try {
      const [two, three, bcast, other] = contexts as [Context, Context, Context, Context];
      expect((await two.get('T:ON:BOTH')).value).toBe(5);
      expect((await three.get('T:ON:BOTH')).value).toBe(5);
      // Heard on lo's broadcast address (both addresses are lo's: one socket) and on the group,
      // each search answered once.
      expect((await bcast.get('T:ON:BOTH')).value).toBe(5);
      expect(await repliesTo('127.255.255.255', s.caPort)).toBe(1);
      expect(await repliesTo('224.0.2.9', s.caPort)).toBe(1);
      await expect(other.get('T:ON:BOTH', { timeout: 500 })).rejects.toThrow();
      // Its TCP port is not open on an address outside the list.
      const refused = await new Promise<boolean>((resolve) => {
        const sock = net.connect(s.caPort, '127.0.0.1');
        sock.once('connect', () => resolve(sock.destroy() && false));
        sock.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);
      // libca (pyepics) finds it by its second address.
      const got = await pythonJson<{ v: number }>(
        "import epics, json\nprint(json.dumps(dict(v=epics.caget('T:ON:BOTH', timeout=5))))",
        [],
        { EPICS_CA_ADDR_LIST: '127.0.0.3', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: String(s.caPort) },
      );
      expect(got.v).toBe(5);
    } finally {
      await Promise.all(contexts.map((c) => c.close()));
      await s.close();
    }
  });

  it('0.0.0.0 beside another address is refused at start, as RSRV refuses it', async () => {
    await expect(serveOn('0.0.0.0 127.0.0.2')).rejects.toThrow(/cannot hold 0.0.0.0 and other addresses/);
  });
});
