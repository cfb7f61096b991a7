// The PV Access server in TypeScript, read by this library's PV Access client and by p4p (pvxs)
// over loopback: NTScalar, NTScalarArray and NTEnum values with alarm and time, puts through the
// app's handler, pipelined monitors, a missing name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/index.js';
import { DbrType } from '../../src/ca/index.js';
import { Server, type ServedPv } from '../../src/server/index.js';
import { pythonJson } from 'epicsperf-testkit/python';

let server: Server;
let ctx: Context<'pva'>;
let counter: ServedPv;

beforeAll(async () => {
  server = await Server.start({ ca: false, pva: { port: 0, udpPort: 0, host: '127.0.0.1' } });
  counter = server.pv('P:COUNTER', { value: 1.5, metadata: { units: 'mm', precision: 2 } });
  server.pv('P:WAVE', { value: new Float64Array([1, 2, 3]), maxCount: 10 });
  server.pv('P:MODE', { type: DbrType.ENUM, value: 1, metadata: { enumStrings: ['Off', 'On'] } });
  server.pv('P:NAME', { value: 'hello' });
  const guarded = server.pv('P:GUARDED', { value: 0 });
  guarded.onPut = ({ value }) =>
    Number(value) > 100 ? { accept: false, message: 'too large' } : { accept: true, value: Number(value) * 2 };
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
});
