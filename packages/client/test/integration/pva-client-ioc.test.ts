// The PV Access client against the built-in IOC's QSRV: every kind of record cross-checked field
// by field with p4p, pvRequest field selection, GET_FIELD, puts, monitors in both forms,
// snapshots with missing names, names of both protocols in one Context, and bad calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import { BadArgumentError, ClosedError, Context, NotFoundError, PvaReading, type MonitorEvent } from '../../src/index.js';
import { expectSame, p4pRead, plain, pvaContextFor, pvaEnv, type P4pReading } from '../helpers/pva-helpers.js';
import { waitFor } from 'epicsperf-testkit/client-helpers';
import { KINDS } from 'epicsperf-testkit/kinds';

let ioc: Ioc;
let ctx: Context<'pva'>;
const K = 'TEST:KIND:';

beforeAll(async () => {
  ioc = await startIoc({ records: 20, rate: 10, arrayElements: 1000, arrayRate: 2 });
  ctx = pvaContextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

describe('every kind of record matches p4p, field by field', () => {
  let ref: Map<string, P4pReading>;
  beforeAll(async () => {
    ref = new Map(
      (
        await p4pRead(
          ioc.env,
          KINDS.map((k) => K + k),
        )
      ).map((r) => [r.name, r]),
    );
  }, 60_000);

  it.each(KINDS)('%s', async (kind) => {
    const name = K + kind;
    const want = ref.get(name)!;
    expect(want.ok, want.error).toBe(true);
    const r = await ctx.get(name, { timeout: 5000 });
    expect(r).toBeInstanceOf(PvaReading);
    expect(r.type.kind === 'structure' && r.type.id).toBe(want.id);
    // Field by field, every field of the type: what QSRV sent and, where it sent nothing, the
    // type's default, as p4p has them.
    expectSame(expect, plain(r.raw) as Record<string, unknown>, want.value!, name);
    const alarm = want.value!.alarm as { severity: number; status: number; message: string };
    const ts = want.value!.timeStamp as { secondsPastEpoch: number; nanoseconds: number };
    expect([r.severity, r.status, r.message]).toEqual([alarm.severity, alarm.status, alarm.message]);
    expect([r.secondsPastEpoch, r.nanoseconds]).toEqual([ts.secondsPastEpoch, ts.nanoseconds]);
    expect(r.timestamp.getTime()).toBe(ts.secondsPastEpoch * 1000 + Math.floor(ts.nanoseconds / 1e6));
  });

  it("fields QSRV leaves at their defaults are there in a GET and a monitor's first update, as in p4p", async () => {
    // valueAlarm (whole or in part), display.precision 0, display.units "", control.minStep 0: QSRV never marks them.
    for (const kind of ['LONG', 'SHORT', 'STRING', 'DOUBLE', 'ARR:SHORT']) {
      const name = K + kind;
      const want = ref.get(name)!.value!;
      const got = await ctx.get(name, { timeout: 5000 });
      const first = await new Promise<PvaReading>((resolve, reject) => {
        const m = ctx.monitor(name, { timeout: 5000 }, (ev) => {
          if (ev.kind === 'update') {
            m.close();
            resolve(ev);
          } else if (ev.kind === 'error') reject(ev.error);
        });
      });
      for (const r of [got, first]) {
        const raw = plain(r.raw) as Record<string, unknown>;
        for (const f of ['display', 'control', 'valueAlarm'] as const) if (f in want) expect(raw[f], `${name}.${f}`).toEqual(want[f]);
        expectSame(expect, { ...raw, timeStamp: 0 }, { ...want, timeStamp: 0 }, name);
        const nt = r.nt;
        if (nt.kind !== 'NTScalar' && nt.kind !== 'NTScalarArray') throw new Error(`${name} is ${nt.kind}`);
        const d = want.display as Record<string, unknown>;
        expect(nt.display, `${name} nt.display`).toEqual({
          limitLow: d.limitLow,
          limitHigh: d.limitHigh,
          description: d.description,
          units: d.units,
          precision: d.precision,
        });
      }
    }
    const long = (await ctx.get(K + 'LONG')).raw;
    expect((long.valueAlarm as Record<string, unknown>).active).toBe(false);
    expect((long.display as Record<string, unknown>).precision).toBe(0);
    expect(((await ctx.get(K + 'STRING')).raw.display as Record<string, unknown>).units).toBe('');
  });

  it('typed results: NTScalar, NTScalarArray as typed arrays, NTEnum with its choices', async () => {
    const d = await ctx.get(K + 'DOUBLE');
    expect(d.nt.kind).toBe('NTScalar');
    expect(d.value).toBe(3.14159);
    if (d.nt.kind === 'NTScalar') expect(d.nt.display?.units).toBe('mm');
    const a = await ctx.get(K + 'ARR:LONG');
    expect(a.nt.kind).toBe('NTScalarArray');
    expect(a.value).toBeInstanceOf(Int32Array);
    expect(Array.from(a.value as Int32Array)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => i * 100000));
    expect((await ctx.get(K + 'ARR:FLOAT')).value).toBeInstanceOf(Float32Array);
    const e = await ctx.get(K + 'ENUM');
    expect(e.nt).toMatchObject({ kind: 'NTEnum', value: { index: 1, choices: ['Off', 'On', 'Fault'] } });
    expect(e.value).toBe(1);
  });
});

describe('requests', () => {
  it('pvRequest field selection: QSRV sends the whole type and the fields asked for, the others hold defaults, as in p4p', async () => {
    const request = 'field(value,alarm.severity)';
    const r = await ctx.get(K + 'DOUBLE', { request });
    const [want] = await p4pRead(ioc.env, [K + 'DOUBLE'], request);
    expect(want!.ok, want!.error).toBe(true);
    expectSame(expect, plain(r.raw) as Record<string, unknown>, want!.value!, K + 'DOUBLE');
    expect(Object.keys(r.raw)).toEqual(['value', 'alarm', 'timeStamp', 'display', 'control', 'valueAlarm']);
    expect(r.raw.display).toMatchObject({ units: '', precision: 0 }); // not asked for: 'mm' and 4 stay on the server
    expect(r.value).toBe(3.14159);
    await expect(ctx.get(K + 'DOUBLE', { request: 'field(value' })).rejects.toBeInstanceOf(BadArgumentError);
  });

  it('GET_FIELD gives the type, whole or of one field', async () => {
    const t = await ctx.getField(K + 'ARR:SHORT');
    expect(t).toMatchObject({ kind: 'structure', id: 'epics:nt/NTScalarArray:1.0' });
    expect(await ctx.getField(K + 'ARR:SHORT', 'value')).toEqual({ kind: 'scalarArray', type: 'short', array: 'variable' });
    await expect(ctx.getField(K + 'ARR:SHORT', 'nosuchfield')).rejects.toBeInstanceOf(BadArgumentError);
    expect(await ctx.getField(K + 'ARR:SHORT', 'alarm.severity')).toEqual({ kind: 'scalar', type: 'int' });
    await expect(ctx.getField(`ca://${K}LONG`)).rejects.toBeInstanceOf(BadArgumentError);
  });

  it('puts: numbers, strings, enums by index and by name, arrays, a one-element array to a scalar, fields by path; p4p reads them back', async () => {
    await ctx.put(K + 'LONG', 7);
    await ctx.put(K + 'DOUBLE', '2.5');
    await ctx.put(K + 'STRING', 'from node');
    await ctx.put(K + 'ENUM', 'Fault');
    await ctx.put(K + 'ARR:SHORT', [1, -2, 3]);
    const back = new Map(
      (await p4pRead(ioc.env, [K + 'LONG', K + 'DOUBLE', K + 'STRING', K + 'ENUM', K + 'ARR:SHORT'])).map((r) => [r.name, r.value!]),
    );
    expect(back.get(K + 'LONG')!.value).toBe(7);
    expect(back.get(K + 'DOUBLE')!.value).toBe(2.5);
    expect(back.get(K + 'STRING')!.value).toBe('from node');
    expect((back.get(K + 'ENUM')!.value as { index: number }).index).toBe(2);
    expect(back.get(K + 'ARR:SHORT')!.value).toEqual([1, -2, 3]);
    await ctx.put(K + 'ENUM', { 'value.index': 1 });
    expect((await ctx.get(K + 'ENUM')).value).toBe(1);
    await ctx.put(K + 'DOUBLE', new Float64Array([6.25]));
    expect((await ctx.get(K + 'DOUBLE')).value).toBe(6.25);
    await ctx.put(K + 'LONG', 42);
    await ctx.put(K + 'DOUBLE', 3.14159);
    await ctx.put(K + 'STRING', 'hello epics');
    await ctx.put(
      K + 'ARR:SHORT',
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => i * -300),
    );
  });

  it('bad puts fail with a clear error and send nothing', async () => {
    await expect(ctx.put(K + 'LONG', 'abc')).rejects.toThrow(/not a number/);
    await expect(ctx.put(K + 'LONG', 1.5)).rejects.toThrow(/not an integer/);
    await expect(ctx.put(K + 'ENUM', 'Maybe')).rejects.toThrow(/not one of the choices/);
    await expect(ctx.put(K + 'LONG', { nosuch: 1 })).rejects.toThrow(/no field 'nosuch'/);
    await expect(ctx.put(K + 'LONG', [1, 2])).rejects.toThrow(/an array of 2 elements to a scalar/);
    expect((await ctx.get(K + 'LONG')).value).toBe(42);
  });
});

describe('monitors', () => {
  it('callback form: connected, then counter updates stepping by exactly 1', async () => {
    const events: MonitorEvent<PvaReading>[] = [];
    const m = ctx.monitor(`${ioc.counterNames()[0]}`, { pipelineSize: 4 }, (ev) => events.push(ev));
    // More updates than the pipeline holds: the acks keep them coming.
    await waitFor(() => m.updates >= 12, 5000, '12 updates');
    m.close();
    // PV Access tells no access rights nor CA native type: the event names the server, nothing more.
    expect(events[0]).toEqual({
      kind: 'connected',
      name: ioc.counterNames()[0],
      server: expect.stringMatching(new RegExp(`:${ioc.pvaPort}$`)),
    });
    const values = events.filter((e): e is PvaReading => e.kind === 'update').map((e) => e.value as number);
    for (let i = 1; i < values.length; i++) expect(values[i]! - values[i - 1]!).toBe(1);
    const last = events.at(-1) as PvaReading;
    expect(last.severity).toBe(1);
    expect(last.message).toBe('HIGH');
    expect(m.active).toBe(false);
  });

  it('iterator form with a field selection; readings are not changed by later updates', async () => {
    const m = ctx.monitor(ioc.counterNames()[1]!, { request: 'field(value,timeStamp)', queueSize: 10 });
    const got: PvaReading[] = [];
    for await (const ev of m) {
      if (ev.kind === 'update') got.push(ev);
      if (got.length === 3) break;
    }
    expect(Object.keys(got[0]!.raw)).toEqual(got[0]!.type.kind === 'structure' ? got[0]!.type.fields.map((f) => f.name) : []);
    expect(got[0]!.raw.alarm).toEqual({ severity: 0, status: 0, message: '' }); // not asked for: its default
    expect((got[1]!.value as number) - (got[0]!.value as number)).toBe(1);
    expect(got[1]!.posixSeconds).toBeGreaterThan(got[0]!.posixSeconds);
    expect(got[0]!.raw.timeStamp).not.toBe(got[1]!.raw.timeStamp);
  });

  it("flow control: a slow iterator holds at most its window, the connection's other monitors keep their pace, a fast one gets every update", async () => {
    // Counters at 10 Hz. The slow consumer takes one update every 400 ms with a window of 4; a
    // callback monitor on the same connection counts meanwhile; a fast iterator takes them all.
    const [slowName, otherName, fastName] = ioc.counterNames();
    const slow = ctx.monitor(slowName!, { pipelineSize: 4 });
    let other = 0;
    const o = ctx.monitor(otherName!, {}, (ev) => {
      if (ev.kind === 'update') other++;
    });
    const fast = ctx.monitor(fastName!);
    const fastValues: number[] = [];
    const fastDone = (async () => {
      for await (const ev of fast) {
        if (ev.kind === 'update') fastValues.push(ev.value as number);
        if (fastValues.length === 25) break;
      }
    })();
    const taken: number[] = [];
    let held = 0;
    for await (const ev of slow) {
      if (ev.kind !== 'update') continue;
      taken.push(ev.value as number);
      // Received and not yet taken, at most: the window (plus the one in hand).
      held = Math.max(held, slow.updates - taken.length);
      if (taken.length === 8) break;
      await new Promise((r) => setTimeout(r, 400));
    }
    await fastDone;
    o.close();
    // Acknowledged as taken: never more than the window waits here (acknowledged on receipt, the
    // 3 s would have piled about 20 up), and QSRV squashes the rest into its queue's last slot.
    expect(held).toBeLessThanOrEqual(4);
    expect(slow.overruns).toBe(0);
    for (let i = 1; i < taken.length; i++) expect(taken[i]!).toBeGreaterThan(taken[i - 1]!);
    expect(other).toBeGreaterThan(20);
    for (let i = 1; i < fastValues.length; i++) expect(fastValues[i]! - fastValues[i - 1]!).toBe(1);
  });

  it('a missing name with a timeout ends in a not-found error event', async () => {
    const events: MonitorEvent<PvaReading>[] = [];
    const m = ctx.monitor('TEST:NO:SUCH:PV', { timeout: 300 }, (ev) => events.push(ev));
    await waitFor(() => events.length > 0, 3000, 'the error event');
    expect(events[0]).toMatchObject({ kind: 'error', error: { code: 'ERR_EPICS_NOT_FOUND' } });
    expect(m.active).toBe(false);
  });
});

describe('snapshots and names', () => {
  it('one result per name in order, missing names fail on their own timeout', async () => {
    const names = [...ioc.counterNames().slice(0, 10), 'TEST:MISSING:1', K + 'ARR:DOUBLE', 'TEST:MISSING:2', K + 'STRING'];
    const t0 = Date.now();
    const r = await ctx.snapshot(names, { timeout: 500 });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(r.map((x) => x.name)).toEqual(names);
    expect(r.filter((x) => x.ok)).toHaveLength(12);
    const miss = r[10]!;
    expect(miss.ok).toBe(false);
    if (!miss.ok) expect(miss.error).toBeInstanceOf(NotFoundError);
    const s = r[13]!;
    expect(s.ok && s.value).toBe('hello epics');
    // The default request selects value, alarm and timeStamp; the rest of the type holds defaults.
    expect(s.ok && Object.keys(s.reading.raw)).toEqual(['value', 'alarm', 'timeStamp', 'display']);
    expect(s.ok && s.reading.raw.display).toMatchObject({ units: '' });
  });

  it('ca:// and pva:// names in one snapshot; unprefixed names use the default protocol', async () => {
    const env = { ...pvaEnv(ioc.env), EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' };
    const both = new Context({ env });
    try {
      const r = await both.snapshot([`ca://${K}LONG`, `pva://${K}LONG`, `${K}DOUBLE`], { timeout: 3000 });
      expect(r.map((x) => x.ok)).toEqual([true, true, true]);
      expect(r[0]!.ok && r[0]!.reading).not.toBeInstanceOf(PvaReading);
      expect(r[1]!.ok && r[1]!.reading).toBeInstanceOf(PvaReading);
      expect(r[2]!.ok && r[2]!.reading).not.toBeInstanceOf(PvaReading);
      expect(r[0]!.ok && r[1]!.ok && [r[0]!.value, r[1]!.value]).toEqual([42, 42]);
      expect((await both.get(`pva://${K}ENUM`)).nt.kind).toBe('NTEnum');
    } finally {
      await both.close();
    }
  });

  it('bad calls: empty name, bad timeout, a callback in place of the options, closed context', async () => {
    await expect(ctx.get('')).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.get(K + 'LONG', { timeout: -1 })).rejects.toBeInstanceOf(BadArgumentError);
    const callback = (() => {}) as unknown as Parameters<typeof ctx.monitor>[1];
    expect(() => ctx.monitor(K + 'LONG', callback)).toThrow(/the callback is the third argument/);
    const c = pvaContextFor(ioc.env);
    // Closing fails what is pending at once: a search in progress and a snapshot.
    const pending = c.get('TEST:NOT:THERE', { timeout: 10_000 }).catch((e: unknown) => e);
    const snap = c.snapshot(['TEST:NOT:THERE:2', K + 'LONG'], { timeout: 10_000 });
    const t0 = Date.now();
    await c.close();
    expect(await pending).toBeInstanceOf(ClosedError);
    expect((await snap).map((x) => x.ok || x.code)).toEqual(['ERR_EPICS_CLOSED', 'ERR_EPICS_CLOSED']);
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(c.get(K + 'LONG')).rejects.toBeInstanceOf(ClosedError);
  });
});
