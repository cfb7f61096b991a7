// The client against the built-in IOC (EPICS base's RSRV): every correctness PV cross-checked
// with pyepics, puts, monitors in both forms, snapshot, large arrays and bad calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import {
  BadArgumentError,
  ClosedError,
  type Context,
  NotFoundError,
  Reading,
  type MonitorEvent,
  type TimeReading,
} from '../../src/index.js';
import { contextFor, pyepicsRead, waitFor, type PyReading } from 'epicsperf-testkit/client-helpers';
import { KINDS } from 'epicsperf-testkit/kinds';

let ioc: Ioc;
let ctx: Context;
const K = 'TEST:KIND:';

beforeAll(async () => {
  ioc = await startIoc({ records: 20, rate: 10, arrayElements: 100_000, arrayRate: 2 });
  ctx = contextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

function plain(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>).map(plain);
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  return v;
}

describe('every correctness PV matches pyepics', () => {
  let py: Map<string, PyReading>;
  beforeAll(async () => {
    py = new Map(
      (
        await pyepicsRead(
          ioc.env,
          KINDS.map((k) => K + k),
        )
      ).map((r) => [r.name, r]),
    );
  });

  it.each(KINDS)('%s: value, native type, count, alarm, timestamp', async (kind) => {
    const name = K + kind;
    const ref = py.get(name)!;
    expect(ref.ok).toBe(true);
    const r = await ctx.get(name, { timeout: 5000 });
    expect(r).toBeInstanceOf(Reading);
    expect(r.dbrType - 14).toBe(ref.type); // TIME form of the native type
    expect(plain(r.value)).toEqual(ref.value);
    expect(r.severity).toBe(ref.severity);
    expect(r.status).toBe(ref.status);
    // pyepics rounds its float timestamp to the microsecond.
    expect(Math.abs(r.posixSeconds - ref.timestamp!)).toBeLessThan(2e-6);
    expect(Math.abs(r.timestamp.getTime() - ref.timestamp! * 1000)).toBeLessThan(1.001);
  });

  it.each(KINDS.filter((k) => k !== 'STRING' && k !== 'EMPTY' && k !== 'STR39'))('%s: ctrl metadata', async (kind) => {
    const name = K + kind;
    const ref = py.get(name)!;
    const r = await ctx.get(name, { form: 'ctrl', timeout: 5000 });
    const m = r.metadata!;
    if (ref.enum_strs) expect(m.enumStrings).toEqual(ref.enum_strs);
    if (ref.units !== undefined) expect(m.units).toBe(ref.units);
    if (ref.precision !== undefined) expect(m.precision).toBe(ref.precision);
    for (const [ours, theirs] of [
      ['upperDisplayLimit', 'upper_disp_limit'],
      ['lowerDisplayLimit', 'lower_disp_limit'],
      ['upperControlLimit', 'upper_ctrl_limit'],
      ['lowerControlLimit', 'lower_ctrl_limit'],
      ['upperAlarmLimit', 'upper_alarm_limit'],
      ['lowerAlarmLimit', 'lower_alarm_limit'],
    ] as const) {
      if (ref[theirs] !== undefined) expect(plain(m[ours])).toEqual(ref[theirs]);
    }
  });

  it('a char waveform reads as a long string, as pyepics as_string does', async () => {
    const r = await ctx.get(K + 'LONGSTRING', { longString: true });
    expect(r.value).toBe(py.get(K + 'LONGSTRING')!.char_value);
    expect((r.value as string).length).toBeGreaterThan(40);
  });

  it('an enum reads as its state string when asked for a string', async () => {
    const r = await ctx.get(K + 'ENUM', { type: 'string' });
    expect(r.value).toBe(py.get(K + 'ENUM')!.enum_strs![py.get(K + 'ENUM')!.value as number]);
  });
});

describe('dynamic size and explicit counts', () => {
  it('count 0 returns the current length (NORD), an explicit count that many', async () => {
    expect((await ctx.get(K + 'DYN')).count).toBe(10);
    const five = await ctx.get(K + 'DYN', { count: 5 });
    expect(Array.from(five.value as Float64Array)).toEqual([0, 1, 2, 3, 4]);
  });

  it('a 100,000-element array (extended header) is whole and typed', async () => {
    const big = contextFor(ioc.env);
    try {
      const r = await big.get('TEST:ARRAY', { timeout: 5000 });
      const a = r.value as Float64Array;
      expect(a).toBeInstanceOf(Float64Array);
      expect(a.length).toBe(100_000);
      // Every element of update k is k: a small whole number (a byte-order slip would not be).
      expect(Number.isInteger(a[0]) && a[0]! >= 0 && a[0]! < 1e6).toBe(true);
      expect(a.every((x) => x === a[0])).toBe(true);
    } finally {
      await big.close();
    }
  });

  it('an array larger than EPICS_CA_MAX_ARRAY_BYTES is refused with a clear error', async () => {
    const small = contextFor({ ...ioc.env, EPICS_CA_MAX_ARRAY_BYTES: '16384' });
    try {
      await expect(small.get('TEST:ARRAY')).rejects.toThrow(/EPICS_CA_MAX_ARRAY_BYTES/);
      await expect(small.get('TEST:ARRAY')).rejects.toBeInstanceOf(BadArgumentError);
    } finally {
      await small.close();
    }
  });
});

describe('put', () => {
  it('writes and waits for completion, then reads back (double, string, enum, long string, array)', async () => {
    await ctx.put(K + 'DOUBLE', 1.25);
    expect((await ctx.get(K + 'DOUBLE')).value).toBe(1.25);
    await ctx.put(K + 'DOUBLE', 3.14159);
    await ctx.put(K + 'STRING', 'written by test');
    expect((await ctx.get(K + 'STRING')).value).toBe('written by test');
    await ctx.put(K + 'STRING', 'hello epics');
    await ctx.put(K + 'ENUM', 'Fault');
    expect((await ctx.get(K + 'ENUM')).value).toBe(2);
    await ctx.put(K + 'ENUM', 1);
    expect((await ctx.get(K + 'ENUM', { type: 'string' })).value).toBe('On');
    const text = 'x'.repeat(100);
    const before = (await ctx.get(K + 'LONGSTRING', { longString: true })).value as string;
    await ctx.put(K + 'LONGSTRING', text);
    expect((await ctx.get(K + 'LONGSTRING', { longString: true })).value).toBe(text);
    await ctx.put(K + 'LONGSTRING', before);
    await ctx.put(K + 'DYN', [5, 6, 7]);
    expect(Array.from((await ctx.get(K + 'DYN')).value as Float64Array)).toEqual([5, 6, 7]);
    await ctx.put(
      K + 'DYN',
      Array.from({ length: 10 }, (_, i) => i),
    );
  });

  it('fire-and-forget WRITE lands too', async () => {
    await ctx.put(K + 'LONG', 17, { wait: false });
    let v: unknown;
    for (let i = 0; i < 50 && v !== 17; i++) v = (await ctx.get(K + 'LONG')).value;
    expect(v).toBe(17);
    await ctx.put(K + 'LONG', 42);
  });

  it('a value of the wrong type is refused before it is sent', async () => {
    await expect(ctx.put(K + 'DOUBLE', 'abc')).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.put(K + 'SHORTMAX', 40000)).rejects.toThrow(/does not fit a short/);
    await expect(ctx.put(K + 'LONG', 1.5)).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.put(K + 'STRING', 'y'.repeat(40))).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.put(K + 'ARR:SHORT', new Array(11).fill(1))).rejects.toThrow(/do not fit/);
    // The same on a connected channel without waiting (a plain WRITE sent at once): a rejection, not a throw.
    await expect(ctx.put(K + 'DOUBLE', 'abc', { wait: false })).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.put(K + 'LONG', 1.5, { wait: false })).rejects.toBeInstanceOf(BadArgumentError);
    expect((await ctx.get(K + 'DOUBLE')).value).toBe(3.14159);
  });
});

describe('monitor', () => {
  it('callback form: a counter steps by exactly 1, in MINOR alarm, with increasing timestamps', async () => {
    const events: MonitorEvent[] = [];
    const m = ctx.monitor('TEST:CALC1', {}, (ev) => events.push(ev));
    await waitFor(() => events.filter((e) => e.kind === 'update').length >= 6, 5000, 'six updates');
    m.close();
    expect(events[0]!.kind).toBe('connected');
    const ups = events.filter((e): e is TimeReading => e.kind === 'update');
    for (let i = 1; i < ups.length; i++) {
      expect(ups[i]!.value).toBe((ups[i - 1]!.value as number) + 1);
      expect(ups[i]!.posixSeconds).toBeGreaterThan(ups[i - 1]!.posixSeconds);
    }
    expect(ups.slice(1).every((u) => u.severity === 1)).toBe(true);
  });

  it('a 100,000-element waveform: every update whole and in order; arrays kept without reuseArrays stay intact', async () => {
    for (const reuseArrays of [false, true]) {
      const seen: number[] = [];
      const kept: Float64Array[] = [];
      let broken = 0;
      const m = ctx.monitor('TEST:ARRAY', { reuseArrays }, (ev) => {
        if (ev.kind !== 'update') return;
        const a = ev.value as Float64Array;
        const k = a[0]!;
        if (a.length !== 100_000 || !Number.isInteger(k) || k < 0 || k > 1e6 || !a.every((x) => x === k)) broken++;
        seen.push(k);
        kept.push(reuseArrays ? a.slice() : a);
      });
      await waitFor(() => seen.length >= 4, 10_000, 'four array updates');
      m.close();
      expect(broken).toBe(0);
      // In order; the IOC now and then posts the waveform again with the last put's array (a new
      // array: docs/results.md, "Repeated updates come from the IOC"), never an older one.
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!);
      expect(seen.at(-1)).toBeGreaterThan(seen[0]!);
      // Each update its own array, never one handed over twice.
      if (!reuseArrays) expect(new Set(kept).size).toBe(kept.length);
      // Arrays handed over without reuseArrays are the caller's: later updates never touch them.
      kept.forEach((a, i) => expect(a.every((x) => x === seen[i])).toBe(true));
    }
  });

  it('iterator form: connection event first, then updates; a tiny queue counts overruns', async () => {
    const m = ctx.monitor('TEST:CALC2', { queueSize: 2 });
    const it = m[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ kind: 'connected', name: 'TEST:CALC2' });
    await new Promise((r) => setTimeout(r, 600)); // ~6 updates into a queue of 2
    expect(m.overruns).toBeGreaterThan(0);
    const a = (await it.next()).value as Reading;
    const b = (await it.next()).value as Reading;
    expect(b.value).toBe((a.value as number) + 1);
    await it.return!();
    let n = 0;
    for await (const ev of ctx.monitor('TEST:CALC3')) {
      if (ev.kind === 'update' && ++n === 3) break;
    }
    expect(n).toBe(3);
  });

  it('an AbortSignal ends the iteration', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    let updates = 0;
    for await (const ev of ctx.monitor('TEST:CALC4', { signal: ac.signal })) if (ev.kind === 'update') updates++;
    expect(updates).toBeGreaterThan(0);
  });
});

describe('snapshot', () => {
  it('one result per name in input order; missing names fail with not-found in about the timeout', async () => {
    const names = ['TEST:CALC1', 'NOPE:A', 'TEST:CALC2', K + 'STRING', 'NOPE:B', 'TEST:CALC2'];
    const t0 = performance.now();
    const res = await ctx.snapshot(names, { timeout: 500 });
    const wall = performance.now() - t0;
    expect(res.map((r) => r.name)).toEqual(names);
    expect(res.map((r) => r.ok)).toEqual([true, false, true, true, false, true]);
    expect(res[1]).toMatchObject({ ok: false, code: 'ERR_EPICS_NOT_FOUND' });
    expect((res[1] as { error: unknown }).error).toBeInstanceOf(NotFoundError);
    expect(res[3]).toMatchObject({ ok: true, value: 'hello epics', severity: 0 });
    expect(wall).toBeGreaterThanOrEqual(490);
    expect(wall).toBeLessThan(900);
    for (const r of res) expect(r.elapsedMs).toBeLessThanOrEqual(wall + 1);
  });

  it('a batch set up over several event-loop turns: every name answered, in order, each against the IOC', async () => {
    // 1,000 names (20 counters and 980 missing names, interleaved) take several setup slices.
    const names = Array.from({ length: 1000 }, (_, i) => (i % 50 === 0 ? `TEST:CALC${i / 50 + 1}` : `NOPE:SLICE:${i}`));
    const fresh = contextFor(ioc.env);
    try {
      const res = await fresh.snapshot(names, { timeout: 400 });
      expect(res.map((r) => r.name)).toEqual(names);
      for (const [i, r] of res.entries()) {
        if (i % 50 === 0) expect(r).toMatchObject({ ok: true, severity: 1 });
        else expect(r).toMatchObject({ ok: false, code: 'ERR_EPICS_NOT_FOUND' });
      }
      // the batch lets its channels go in the turn after it resolves: no name searches on
      await new Promise((r) => setImmediate(r));
      expect(fresh.stats().searching).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it('an abort while the batch is still being set up fails every name, and the context goes on', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `NOPE:ABORT:${i}`);
    const fresh = contextFor(ioc.env);
    try {
      const ac = new AbortController();
      const p = fresh.snapshot(names, { timeout: 5000, signal: ac.signal });
      await new Promise((r) => setImmediate(r));
      const set = fresh.stats().channels;
      expect(set).toBeGreaterThan(0);
      expect(set).toBeLessThan(2000); // part of the batch is set up, the rest is not yet
      ac.abort();
      const res = await p;
      expect(res).toHaveLength(2000);
      expect(res.every((r) => !r.ok && r.code === 'ERR_EPICS_ABORTED')).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(fresh.stats()).toMatchObject({ channels: 0, searching: 0 });
      expect((await fresh.get('TEST:CALC1', { timeout: 2000 })).severity).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('a bad name fails alone, never the batch', async () => {
    const res = await ctx.snapshot(['', 'TEST:CALC1'], { timeout: 1000 });
    expect(res[0]).toMatchObject({ ok: false, code: 'ERR_EPICS_BAD_ARGUMENT' });
    expect(res[1]!.ok).toBe(true);
  });
});

describe('bad calls', () => {
  it('empty and oversized names, bad timeouts, unknown types', async () => {
    await expect(ctx.get('')).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.get('A'.repeat(2000))).rejects.toThrow(/at most 1415/);
    await expect(ctx.get('TEST:CALC1', { timeout: -1 })).rejects.toBeInstanceOf(BadArgumentError);
    await expect(ctx.get('TEST:CALC1', { type: 'bogus' as never })).rejects.toThrow(/unknown type/);
    await expect(ctx.get('NOPE:C', { timeout: 200 })).rejects.toMatchObject({ code: 'ERR_EPICS_NOT_FOUND', pvName: 'NOPE:C' });
  });

  it('a get after close fails with a closed error; close is idempotent', async () => {
    const c = contextFor(ioc.env);
    expect((await c.get('TEST:CALC1')).value).toEqual(expect.any(Number));
    await c.close();
    await c.close();
    await expect(c.get('TEST:CALC1')).rejects.toBeInstanceOf(ClosedError);
    expect(() => c.monitor('TEST:CALC1')).toThrow(ClosedError);
  });

  it('an aborted get rejects with the aborted code', async () => {
    const ac = new AbortController();
    const p = ctx.get('NOPE:D', { signal: ac.signal, timeout: 5000 });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'ERR_EPICS_ABORTED' });
  });
});
