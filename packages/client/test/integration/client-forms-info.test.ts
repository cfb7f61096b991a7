// Readings carry what their form carries (a timestamp only in TIME forms, checked at run time and
// in the types), the 'full' get merges TIME and CTRL, info() tells what pyepics's cainfo fields
// tell for a PV of every native type of the built-in IOC, and the IOC's access security
// changing a client's rights reaches a monitor's stream as events no full queue drops. The IOC's
// settings records answer with their types and values, and its read-only record refuses a put.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { settingNames, settingValue, startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import {
  AccessDeniedError,
  type ChannelInfo,
  type Context,
  type CtrlReading,
  type DbrMetadata,
  type MonitorEvent,
  NotFoundError,
  type TimeReading,
} from '../../src/index.js';
import { contextFor, pyepicsRead, setGate, waitFor } from 'epicsperf-testkit/client-helpers';
import { pythonJson } from 'epicsperf-testkit/python';

let ioc: Ioc;
let ctx: Context;
const K = 'TEST:KIND:';
/** One PV per native type (string, short, float, enum, char, long, double), scalars and arrays. */
const BY_TYPE = ['STRING', 'SHORT', 'FLOAT', 'ENUM', 'CHAR', 'LONG', 'DOUBLE', 'ARR:SHORT', 'ARR:DOUBLE', 'LONGSTRING', 'DYN'].map(
  (k) => K + k,
);

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0, accessSecurity: true, settings: 10 });
  ctx = contextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

describe('timestamps by form', () => {
  it.each(['plain', 'sts', 'gr', 'ctrl'] as const)('%s: no timestamp (undefined, not the EPICS epoch)', async (form) => {
    const r = await ctx.get(K + 'DOUBLE', { form });
    expect(r.form).toBe(form);
    expect(r.timestamp).toBeUndefined();
    expect(r.posixSeconds).toBeUndefined();
    expect(r.secondsPastEpoch).toBeUndefined();
    expect(r.nanoseconds).toBeUndefined();
    expect(r.value).toBe(3.14159);
    if (form === 'plain') expect([r.status, r.severity]).toEqual([undefined, undefined]);
    else expect([r.status, r.severity]).toEqual([0, 0]);
    if (form === 'gr' || form === 'ctrl') expect(r.metadata?.units).toBe('mm');
    else expect(r.metadata).toBeUndefined();
  });

  it('time: a timestamp within a few seconds of now (the counter processes 10 times a second)', async () => {
    const r = await ctx.get('TEST:CALC1', { form: 'time' });
    expect(r.form).toBe('time');
    expect(r.timestamp).toBeInstanceOf(Date);
    expect(Math.abs(r.timestamp.getTime() - Date.now())).toBeLessThan(5000);
    expect(r.posixSeconds).toBeCloseTo(r.timestamp.getTime() / 1000, 2);
  });

  it('the types say so: a CTRL reading has no timestamp, a TIME reading has one, a full reading has both', async () => {
    const c = await ctx.get(K + 'LONG', { form: 'ctrl' });
    expectTypeOf(c).toEqualTypeOf<CtrlReading>();
    expectTypeOf(c.timestamp).toEqualTypeOf<undefined>();
    expectTypeOf(c.metadata).toEqualTypeOf<DbrMetadata>();
    const t = await ctx.get(K + 'LONG');
    expectTypeOf(t).toEqualTypeOf<TimeReading>();
    expectTypeOf(t.timestamp).toEqualTypeOf<Date>();
    const f = await ctx.get(K + 'LONG', { form: 'full' });
    expectTypeOf(f.timestamp).toEqualTypeOf<Date>();
    expectTypeOf(f.metadata).toEqualTypeOf<DbrMetadata>();
    expectTypeOf(f.severity).toEqualTypeOf<number>();
  });

  it("full: value, alarm and time of the TIME read with the CTRL read's metadata, as pyepics reads them", async () => {
    const [ref] = await pyepicsRead(ioc.env, [K + 'DOUBLE']);
    const f = await ctx.get(K + 'DOUBLE', { form: 'full' });
    expect(f.value).toBe(ref!.value);
    expect([f.status, f.severity]).toEqual([ref!.status, ref!.severity]);
    expect(Math.abs(f.posixSeconds - ref!.timestamp!)).toBeLessThan(2e-6);
    expect(f.metadata.units).toBe(ref!.units);
    expect(f.metadata.precision).toBe(ref!.precision);
    expect(f.metadata.upperControlLimit).toBe(ref!.upper_ctrl_limit);
    expect(f.metadata.lowerAlarmLimit).toBe(ref!.lower_alarm_limit);
    const e = await ctx.get(K + 'ENUM', { form: 'full' });
    expect(e.metadata.enumStrings).toEqual(['Off', 'On', 'Fault']);
    expect(e.timestamp).toBeInstanceOf(Date);
  });

  it('monitor and snapshot updates of a CTRL form carry no timestamp either', async () => {
    const got: Array<{ ts: unknown; units: unknown }> = [];
    const m = ctx.monitor(K + 'DOUBLE', { form: 'ctrl' }, (ev) => {
      if (ev.kind === 'update') got.push({ ts: ev.timestamp, units: ev.metadata.units });
    });
    for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    m.close();
    expect(got[0]).toEqual({ ts: undefined, units: 'mm' });
    const [s] = await ctx.snapshot([K + 'DOUBLE'], { form: 'gr' });
    expect(s!.ok && s!.timestamp).toBeUndefined();
    const [t] = await ctx.snapshot([K + 'DOUBLE']);
    expect(t!.ok && t!.timestamp).toBeInstanceOf(Date);
  });
});

interface PyInfo {
  name: string;
  type: number;
  count: number;
  host: string;
  read: boolean;
  write: boolean;
}

const PY_INFO = String.raw`
import json, sys
from epics import ca
out = []
for name in json.loads(sys.argv[1]):
    chid = ca.create_channel(name, connect=False, auto_cb=False)
    assert ca.connect_channel(chid, timeout=5.0), name
    out.append({'name': name, 'type': ca.field_type(chid), 'count': ca.element_count(chid), 'host': ca.host_name(chid),
                'read': bool(ca.read_access(chid)), 'write': bool(ca.write_access(chid))})
print(json.dumps(out))
`;

describe('info', () => {
  let py: Map<string, PyInfo>;
  beforeAll(async () => {
    const env = { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' };
    py = new Map((await pythonJson<PyInfo[]>(PY_INFO, [JSON.stringify(BY_TYPE)], env)).map((r) => [r.name, r]));
  });

  it.each(BY_TYPE)('%s: native type, element count, server and access as pyepics tells them', async (name) => {
    const ref = py.get(name)!;
    const info: ChannelInfo = await ctx.info(name);
    const types = ['string', 'short', 'float', 'enum', 'char', 'long', 'double'];
    expect(info.nativeType).toBe(types[ref.type]);
    expect(info.dbfType).toBe(`DBF_${types[ref.type]!.toUpperCase()}`);
    expect(info.elementCount).toBe(ref.count);
    // libca names the server by host name where it can resolve one: compare the port, and the host by address.
    const [refHost, refPort] = ref.host.split(':');
    expect(info.port).toBe(Number(refPort));
    expect(info.port).toBe(ioc.caPort);
    expect(['127.0.0.1', 'localhost']).toContain(refHost);
    expect(info.host).toBe('127.0.0.1');
    expect(info.server).toBe(`127.0.0.1:${ioc.caPort}`);
    expect([info.readAccess, info.writeAccess]).toEqual([ref.read, ref.write]);
  });

  it('a name nobody serves: NotFoundError after the timeout', async () => {
    await expect(ctx.info('TEST:NO:SUCH:PV', { timeout: 300 })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('the connected event of a monitor carries the access rights', async () => {
    const events: unknown[] = [];
    const m = ctx.monitor(K + 'LONG', {}, (ev) => events.push(ev));
    for (let i = 0; i < 100 && events.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    m.close();
    expect(events[0]).toMatchObject({ kind: 'connected', readAccess: true, writeAccess: true });
  });
});

describe('access rights', () => {
  const GATED = `${K}GATED`;
  const env = (): Record<string, string> => ({ ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' });

  it("the IOC's access security changes them: events in the stream (kept by a full queue), info and puts follow, as pyepics sees", async () => {
    const m = ctx.monitor(GATED, { queueSize: 2 });
    await waitFor(() => m.active && m.updates >= 1, 5000, 'the subscription');
    for (let v = 1; v <= 6; v++) await ctx.put(GATED, v);
    await waitFor(() => m.updates >= 7, 5000, 'six more updates');
    await setGate(ctx, K, false);
    expect(await ctx.info(GATED)).toMatchObject({ readAccess: true, writeAccess: false });
    const [py] = await pythonJson<PyInfo[]>(PY_INFO, [JSON.stringify([GATED])], env());
    expect([py!.read, py!.write]).toEqual([true, false]);
    await expect(ctx.put(GATED, 99, { timeout: 1000 })).rejects.toBeInstanceOf(AccessDeniedError);
    await setGate(ctx, K, true);
    await ctx.put(GATED, 5);
    // RSRV posts the current value to each monitor when the rights change, on closing the gate and
    // on opening it (6 both times): the first value, six puts, those two, and the last put's.
    await waitFor(() => m.updates >= 1 + 6 + 2 + 1, 5000, 'the update of the last put');
    m.close();
    const seen: MonitorEvent[] = [];
    for await (const ev of m) seen.push(ev);
    expect(seen[0]).toMatchObject({ kind: 'connected', readAccess: true, writeAccess: true });
    expect(seen.filter((e) => e.kind === 'access')).toEqual([
      { kind: 'access', name: GATED, readAccess: true, writeAccess: false },
      { kind: 'access', name: GATED, readAccess: true, writeAccess: true },
    ]);
    expect(m.overruns).toBeGreaterThan(0);
    expect(seen.at(-1)).toMatchObject({ kind: 'update', value: 5 });
  });
});

describe('the settings records and the read-only record', () => {
  it('PREFIX:SET:1..10 answer with the type and value of their index mod 5', async () => {
    const names = settingNames('TEST:', 10);
    expect(names[0]).toBe('TEST:SET:1');
    // By i mod 5: ao, longout, mbbo, stringout, waveform DOUBLE[16].
    const kinds = [
      { nativeType: 'double', elementCount: 1 },
      { nativeType: 'long', elementCount: 1 },
      { nativeType: 'enum', elementCount: 1 },
      { nativeType: 'string', elementCount: 1 },
      { nativeType: 'double', elementCount: 16 },
    ];
    for (const [k, name] of names.entries()) {
      const i = k + 1;
      expect(await ctx.info(name), name).toMatchObject({ ...kinds[i % 5], readAccess: true, writeAccess: true });
      const r = await ctx.get(name, { form: 'ctrl' });
      const want = settingValue(i);
      expect(Array.isArray(want) ? Array.from(r.value as ArrayLike<number>) : r.value, name).toEqual(want);
      expect(r.severity, name).toBe(0);
      if (i % 5 === 0) expect(r.metadata, name).toMatchObject({ precision: 3, units: 'mm' });
      if (i % 5 === 2) expect(r.metadata, name).toMatchObject({ enumStrings: ['Off', 'On', 'Standby', 'Fault'] });
    }
  });

  it('PREFIX:KIND:LOCKED reads 7, and a put to it fails with access denied', async () => {
    const name = `${K}LOCKED`;
    expect((await ctx.get(name)).value).toBe(7);
    expect(await ctx.info(name)).toMatchObject({ readAccess: true, writeAccess: false });
    const err = await ctx.put(name, 8, { timeout: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(err).toMatchObject({ code: 'ERR_EPICS_ACCESS_DENIED' });
    expect((await ctx.get(name)).value).toBe(7);
  });
});
