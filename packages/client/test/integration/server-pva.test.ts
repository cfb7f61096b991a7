// The PV Access server in TypeScript, read by this library's PV Access client and by p4p (pvxs)
// over loopback: NTScalar, NTScalarArray and NTEnum values with alarm and time, puts through the
// app's handler, pipelined monitors, a missing name; an NTTable and a structure of the app's, and
// RPC services.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/index.js';
import { DbrType } from '../../src/ca/index.js';
import { Server, type ServedPv, type ServedStructure } from '../../src/server/index.js';
import { pythonJson } from 'epicsperf-testkit/python';

let server: Server;
let ctx: Context<'pva'>;
let counter: ServedPv;
let table: ServedStructure;
const calls: { argument: unknown; user: string }[] = [];

beforeAll(async () => {
  server = await Server.start({ ca: false, pva: { port: 0, udpPort: 0, host: '127.0.0.1' } });
  counter = server.pv('P:COUNTER', { value: 1.5, metadata: { units: 'mm', precision: 2 } });
  server.pv('P:WAVE', { value: new Float64Array([1, 2, 3]), maxCount: 10 });
  server.pv('P:MODE', { type: DbrType.ENUM, value: 1, metadata: { enumStrings: ['Off', 'On'] } });
  server.pv('P:NAME', { value: 'hello' });
  const guarded = server.pv('P:GUARDED', { value: 0 });
  guarded.onPut = ({ value }) =>
    Number(value) > 100 ? { accept: false, message: 'too large' } : { accept: true, value: Number(value) * 2 };
  table = server.structure('P:TABLE', {
    id: 'epics:nt/NTTable:1.0',
    value: { labels: ['x', 'name'], value: { x: new Int32Array([1, 2]), name: ['a', 'b'] }, alarm: {}, timeStamp: {} },
    onPut: ({ value }) => {
      const x = (value.value as { x: Int32Array }).x;
      return x.some((v) => v < 0) ? { accept: false, message: 'x must not be negative' } : { accept: true };
    },
  });
  server.structure('P:CONFIG', { value: { gain: 2, enabled: true, label: 'beam', limits: { low: -1, high: 1 } } });
  server.rpc('P:ADD', ({ argument, peer }) => {
    const a = argument?.value as { a?: number; b?: number } | undefined;
    calls.push({ argument: a, user: peer.user });
    if (typeof a?.a !== 'number' || typeof a.b !== 'number') throw new Error('a and b must be numbers');
    return { sum: a.a + a.b, names: ['a', 'b'] };
  });
  ctx = new Context({
    protocol: 'pva',
    pvaAddrList: [`127.0.0.1:${server.pvaUdpPort}`],
    pvaAutoAddrList: false,
    env: {},
  });
});

afterAll(async () => {
  await ctx?.close();
  await server?.close();
});

describe('the PV Access server', () => {
  it('serves NTScalar, NTScalarArray and NTEnum with alarm, time and display', async () => {
    counter.post(2.5, { severity: 1, status: 3, timestamp: new Date('2026-01-02T03:04:05.500Z') });
    const r = await ctx.get('P:COUNTER');
    // CA's HIHI (3) as QSRV gives it: status DEVICE (1), the condition's name as the message.
    expect([r.value, r.severity, r.status]).toEqual([2.5, 1, 1]);
    expect((r.raw as { alarm: { message: string } }).alarm.message).toBe('HIHI');
    expect(r.timestamp.toISOString()).toBe('2026-01-02T03:04:05.500Z');
    expect((r.raw as { display: { units: string } }).display.units).toBe('mm');
    expect(Array.from((await ctx.get('P:WAVE')).value as Float64Array)).toEqual([1, 2, 3]);
    expect((await ctx.get('P:MODE')).value).toBe(1);
    expect((await ctx.get('P:NAME')).value).toBe('hello');
    await expect(ctx.get('P:MISSING', { timeout: 500 })).rejects.toThrow();
  });

  it('puts through the app: accepted, changed, refused', async () => {
    await ctx.put('P:GUARDED', 21);
    expect((await ctx.get('P:GUARDED')).value).toBe(42);
    await expect(ctx.put('P:GUARDED', 1000)).rejects.toThrow(/too large/);
    await ctx.put('P:WAVE', [4, 5]);
    expect(Array.from((await ctx.get('P:WAVE')).value as Float64Array)).toEqual([4, 5]);
  });

  it('a monitor gets the current value, then the posts in order; a burst past its window ends with the last post', async () => {
    const seen: number[] = [];
    const m = ctx.monitor('P:COUNTER', {}, (e) => {
      if (e.kind === 'update') seen.push(e.value as number);
    });
    await new Promise((r) => setTimeout(r, 300));
    for (let v = 100; v < 140; v++) counter.post(v);
    await new Promise((r) => setTimeout(r, 300));
    m.close();
    expect(seen[0]).toBe(2.5);
    // 16 updates fill the window; the rest wait as one (the latest), sent when the client acknowledges.
    expect(seen.slice(1, 16)).toEqual(Array.from({ length: 15 }, (_, i) => 100 + i));
    expect(seen.slice(16)).toEqual([139]);
  });

  it('p4p (pvxs) gets, puts and monitors', async () => {
    const env = { EPICS_PVA_ADDR_LIST: `127.0.0.1:${server.pvaUdpPort}`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' };
    const ticker = setInterval(() => counter.post((counter.state.value as number) + 1), 50);
    try {
      const got = await pythonJson<{ v: number; units: string; mode: number; put: number; seen: number; steps: boolean }>(
        `
import json, time
from p4p.client.thread import Context
c = Context('pva')
v = c.get('P:COUNTER', timeout=5)
mode = c.get('P:MODE', timeout=5)
c.put('P:GUARDED', 5, timeout=5)
put = c.get('P:GUARDED', timeout=5)
seen = []
sub = c.monitor('P:COUNTER', lambda x: seen.append(float(x)))
time.sleep(1.0)
sub.close()
print(json.dumps(dict(v=float(v), units=v.raw.display.units, mode=int(mode.raw.value.index), put=float(put), seen=len(seen), steps=all(b - a == 1 for a, b in zip(seen[1:], seen[2:])))))
c.close()
`,
        [],
        env,
      );
      expect(got.units).toBe('mm');
      expect(got.mode).toBe(1);
      expect(got.put).toBe(10);
      expect(got.seen).toBeGreaterThan(5);
      expect(got.steps).toBe(true);
    } finally {
      clearInterval(ticker);
    }
  });

  it('pvRequest field selection: p4p gets and monitors the fields asked for only; a selection of nothing is an error', async () => {
    const env = { EPICS_PVA_ADDR_LIST: `127.0.0.1:${server.pvaUdpPort}`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' };
    const got = await pythonJson<{ value: string[]; units: string[]; monitored: string[]; empty: string }>(
      `
import json, time
from p4p.client.thread import Context
c = Context('pva', nt=False)
value = c.get('P:COUNTER', request='field(value,alarm)', timeout=5)
units = c.get('P:COUNTER', request='field(display.units)', timeout=5)
seen = []
sub = c.monitor('P:COUNTER', lambda x: seen.append(x), request='field(value)')
time.sleep(0.5)
sub.close()
try:
    c.get('P:COUNTER', request='field(nothing)', timeout=5)
    empty = 'answered'
except Exception as e:
    empty = str(e)
print(json.dumps(dict(value=list(value.keys()), units=list(units.display.keys()), monitored=list(seen[0].keys()) if seen else [], empty=empty)))
c.close()
`,
      [],
      env,
    );
    expect(got.value).toEqual(['value', 'alarm']);
    expect(got.units).toEqual(['units']);
    expect(got.monitored).toEqual(['value']);
    expect(got.empty).toMatch(/Empty field selection/);
    // This library's client, with the same selection.
    const r = await ctx.get('P:COUNTER', { request: 'field(value,alarm)' });
    expect(Object.keys(r.raw as object)).toEqual(['value', 'alarm']);
  });

  it('structures: an NTTable and an app structure got, put and monitored by this client; puts through the handler; not CA PVs', async () => {
    const r = await ctx.get('P:TABLE');
    expect(r.type.kind === 'structure' && r.type.id).toBe('epics:nt/NTTable:1.0');
    const raw = r.raw as { labels: string[]; value: { x: Int32Array; name: string[] }; timeStamp: { secondsPastEpoch: bigint } };
    expect(raw.labels).toEqual(['x', 'name']);
    expect(Array.from(raw.value.x)).toEqual([1, 2]);
    expect(raw.value.x).toBeInstanceOf(Int32Array);
    expect(raw.value.name).toEqual(['a', 'b']);
    // Stamped by the server when declared.
    expect(Math.abs(Number(raw.timeStamp.secondsPastEpoch) - Date.now() / 1000)).toBeLessThan(60);
    const seen: { x: number[] }[] = [];
    const m = ctx.monitor('P:TABLE', {}, (e) => {
      if (e.kind === 'update') seen.push({ x: Array.from((e.raw as { value: { x: Int32Array } }).value.x) });
    });
    await new Promise((res) => setTimeout(res, 300));
    table.post({ 'value.x': [3, 4, 5], 'value.name': ['c', 'd', 'e'] });
    await ctx.put('P:TABLE', { 'value.x': [7, 8] });
    await expect(ctx.put('P:TABLE', { 'value.x': [-1] })).rejects.toThrow(/x must not be negative/);
    await new Promise((res) => setTimeout(res, 300));
    m.close();
    expect(seen.map((s) => s.x)).toEqual([
      [1, 2],
      [3, 4, 5],
      [7, 8],
    ]);
    // The put changed x only: the names are the last posted.
    expect((table.value.value as { name: string[] }).name).toEqual(['c', 'd', 'e']);

    const cfg = await ctx.get('P:CONFIG');
    expect(cfg.raw).toEqual({ gain: 2, enabled: true, label: 'beam', limits: { low: -1, high: 1 } });
    await ctx.put('P:CONFIG', { 'limits.high': 5, label: 'dump' });
    expect((await ctx.get('P:CONFIG')).raw).toEqual({ gain: 2, enabled: true, label: 'dump', limits: { low: -1, high: 5 } });
    expect(server.find('P:TABLE')).toBeUndefined();
    expect(server.findPva('P:TABLE')).toBe(table);
  });

  it('RPC: this client calls a handler with its argument and gets the result; a handler error and a channel without RPC fail', async () => {
    const r = await ctx.rpc('P:ADD', { a: 2, b: 3.5 });
    expect(r?.raw).toEqual({ sum: 5.5, names: ['a', 'b'] });
    expect(calls.at(-1)!.argument).toEqual({ a: 2, b: 3.5 });
    await expect(ctx.rpc('P:ADD', { a: 'x' })).rejects.toThrow(/a and b must be numbers/);
    await expect(ctx.rpc('P:COUNTER', {})).rejects.toThrow(/serves no RPC/);
    await expect(ctx.get('P:ADD')).rejects.toThrow(/serves RPC only/);
    await expect(ctx.rpc('ca://P:ADD', {})).rejects.toThrow(/PV Access operation/);
  });

  it('p4p (pvxs): gets, puts and monitors the NTTable and the structure, and calls the RPC', async () => {
    const env = { EPICS_PVA_ADDR_LIST: `127.0.0.1:${server.pvaUdpPort}`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' };
    table.post({ 'value.x': [1, 2], 'value.name': ['a', 'b'] });
    const got = await pythonJson<{
      id: string;
      labels: string[];
      x: number[];
      names: string[];
      afterPut: number[];
      refused: string;
      seen: number[][];
      gain: number;
      high: number;
      sum: number;
      rpcError: string;
    }>(
      `
import json, time
from p4p.client.thread import Context
from p4p import Value, Type
c = Context('pva', nt=False)
t = c.get('P:TABLE', timeout=5)
seen = []
sub = c.monitor('P:TABLE', lambda v: seen.append(list(v.value.x)))
time.sleep(0.3)
c.put('P:TABLE', {'value.x': [10, 20, 30]}, timeout=5)
after = c.get('P:TABLE', timeout=5)
try:
    c.put('P:TABLE', {'value.x': [-5]}, timeout=5)
    refused = 'accepted'
except Exception as e:
    refused = str(e)
time.sleep(0.3)
sub.close()
c.put('P:CONFIG', {'limits.high': 9.5}, timeout=5)
cfg = c.get('P:CONFIG', timeout=5)
arg = Value(Type([('a', 'd'), ('b', 'd')]), {'a': 1.25, 'b': 2})
res = c.rpc('P:ADD', arg, timeout=5)
try:
    c.rpc('P:ADD', Value(Type([('a', 's')]), {'a': 'x'}), timeout=5)
    rpc_error = 'answered'
except Exception as e:
    rpc_error = str(e)
print(json.dumps(dict(id=t.getID(), labels=list(t.labels), x=[int(v) for v in t.value.x], names=list(t.value.name),
  afterPut=[int(v) for v in after.value.x], refused=refused, seen=[[int(v) for v in s] for s in seen],
  gain=float(cfg.gain), high=float(cfg.limits.high), sum=float(res.sum), rpcError=rpc_error)))
c.close()
`,
      [],
      env,
    );
    expect(got.id).toBe('epics:nt/NTTable:1.0');
    expect(got.labels).toEqual(['x', 'name']);
    expect(got.x).toEqual([1, 2]);
    expect(got.names).toEqual(['a', 'b']);
    expect(got.afterPut).toEqual([10, 20, 30]);
    expect(got.refused).toMatch(/x must not be negative/);
    expect(got.seen).toEqual([
      [1, 2],
      [10, 20, 30],
    ]);
    expect(got.gain).toBe(2);
    expect(got.high).toBe(9.5);
    expect(got.sum).toBe(3.25);
    expect(got.rpcError).toMatch(/a and b must be numbers/);
  });
});
