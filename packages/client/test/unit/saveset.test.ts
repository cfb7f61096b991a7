// Comparing save sets without an IOC (tolerances, arrays, enums by state, one side missing or not
// connected) and this project's snapshot file (round trips of every kind of value, and refusals
// naming the line).
import { describe, expect, it } from 'vitest';
import { BadArgumentError } from '../../src/index.js';
import { compare, parseSnapshot, writeSnapshot, type SavedPv, type SaveSet } from '../../src/saveset/index.js';

const set = (pvs: SavedPv[]): SaveSet => ({ meta: {}, pvs });
const ok = (name: string, value: SavedPv['value'], more: Partial<SavedPv> = {}): SavedPv => ({ name, ok: true, value, ...more });
const one = (a: SavedPv, b: SavedPv, tolerance?: Parameters<typeof compare>[2]) => compare(set([a]), set([b]), tolerance).pvs[0]!;

describe('compare', () => {
  it('numbers: exact without a tolerance; abs, rel and PSI precision each forgive what they allow and no more', () => {
    const a = ok('X', 1.0, { precision: 3 });
    expect(one(a, ok('X', 1.0))).toMatchObject({ status: 'equal', difference: 0 });
    expect(one(a, ok('X', 1.0005))).toMatchObject({ status: 'different', a: 1, b: 1.0005 });
    expect(one(a, ok('X', 1.0005)).difference).toBeCloseTo(0.0005, 12);
    expect(one(a, ok('X', 1.0005), { tolerance: { abs: 0.001 } }).status).toBe('equal');
    expect(one(a, ok('X', 1.002), { tolerance: { abs: 0.001 } }).status).toBe('different');
    expect(one(a, ok('X', 1.009), { tolerance: { rel: 0.01 } }).status).toBe('equal');
    expect(one(a, ok('X', 1.02), { tolerance: { rel: 0.01 } }).status).toBe('different');
    // PREC 3: 1 x 10^-3 allowed; 2 allows 0.002.
    expect(one(a, ok('X', 1.0009), { tolerance: { precision: 1 } })).toMatchObject({ status: 'equal', allowed: 0.001 });
    expect(one(a, ok('X', 1.0015), { tolerance: { precision: 1 } }).status).toBe('different');
    expect(one(a, ok('X', 1.0015), { tolerance: { precision: 2 } }).status).toBe('equal');
    // No precision: the precision rule allows nothing.
    expect(one(ok('X', 1), ok('X', 1.0001), { tolerance: { precision: 5 } }).status).toBe('different');
    expect(one(ok('X', NaN), ok('X', NaN)).status).toBe('equal');
    expect(one(ok('X', Infinity), ok('X', -Infinity)).status).toBe('different');
  });

  it('per-PV tolerances by a function of the name', () => {
    const d = compare(set([ok('A', 1), ok('B', 1)]), set([ok('A', 1.5), ok('B', 1.5)]), {
      tolerance: (n) => (n === 'A' ? { abs: 1 } : undefined),
    });
    expect(d.pvs.map((p) => p.status)).toEqual(['equal', 'different']);
  });

  it('arrays element by element: how many differ and the largest difference; lengths too', () => {
    expect(one(ok('W', [1, 2, 3, 4]), ok('W', [1, 2.5, 3, 1]))).toMatchObject({
      status: 'different',
      elementsDiffering: 2,
      largestDifference: -3,
    });
    expect(one(ok('W', [1, 2, 3, 4]), ok('W', [1, 2.5, 3, 1]), { tolerance: { abs: 0.5 } })).toMatchObject({
      elementsDiffering: 1,
      largestDifference: -3,
    });
    expect(one(ok('W', [1, 2, 3]), ok('W', [1, 2]))).toMatchObject({
      status: 'different',
      elementsDiffering: 1,
      note: '3 elements against 2',
    });
    expect(one(ok('W', [1, 2]), ok('W', [1, 2])).status).toBe('equal');
    expect(one(ok('W', [7]), ok('W', 7)).status).toBe('equal'); // a count-1 array is its element
    expect(one(ok('S', ['a', 'b']), ok('S', ['a', 'c']))).toMatchObject({ status: 'different', elementsDiffering: 1 });
  });

  it('enums by state name: an index under other states, an index against a name', () => {
    const a = ok('E', 1, { type: 'enum', enumStrings: ['Off', 'On'] });
    expect(one(a, ok('E', 1, { type: 'enum', enumStrings: ['Off', 'On'] }))).toMatchObject({ status: 'equal', a: 'On', b: 'On' });
    expect(one(a, ok('E', 2, { type: 'enum', enumStrings: ['Unknown', 'Off', 'On'] }))).toMatchObject({
      status: 'equal',
      a: 'On',
      b: 'On',
    });
    expect(one(a, ok('E', 0, { type: 'enum' }))).toMatchObject({ status: 'different', a: 'On', b: 'Off' });
    expect(one(a, ok('E', 'On'))).toMatchObject({ status: 'equal' });
  });

  it('strings exactly; a number written as text compares as the number', () => {
    expect(one(ok('S', 'abc'), ok('S', 'abc ')).status).toBe('different');
    expect(one(ok('N', 2.5), ok('N', '2.50')).status).toBe('equal');
    expect(one(ok('N', 2.5), ok('N', 'high')).status).toBe('different');
  });

  it('a PV on one side only, or not connected, is not equal; the summary counts each kind', () => {
    const d = compare(
      set([ok('A', 1), ok('B', 2), { name: 'C', ok: false, error: 'ERR_EPICS_TIMEOUT: t' }]),
      set([ok('A', 1), ok('C', 3), ok('D', 4)]),
    );
    expect(d.pvs.map((p) => [p.name, p.status])).toEqual([
      ['A', 'equal'],
      ['B', 'only-a'],
      ['C', 'not-connected'],
      ['D', 'only-b'],
    ]);
    expect(d.pvs[2]!.note).toMatch(/not connected in a: ERR_EPICS_TIMEOUT/);
    expect(d.summary).toEqual({ total: 4, equal: 1, different: 0, onlyA: 1, onlyB: 1, notConnected: 1 });
    expect(d.equal).toBe(false);
  });
});

describe('the snapshot file', () => {
  const full: SaveSet = {
    meta: {
      time: '2026-11-25T12:00:00.000Z',
      host: 'cr01',
      user: 'ops',
      protocol: 'mixed',
      comment: 'a "quoted", comma',
      labels: ['golden', 'b'],
    },
    pvs: [
      ok('A:DOUBLE', 3.14159, {
        type: 'double',
        count: 1,
        severity: 0,
        status: 0,
        seconds: 1764072000,
        nanoseconds: 123456789,
        units: 'mm',
        precision: 4,
      }),
      ok('A:NAN', NaN, { type: 'double', count: 1 }),
      ok('A:INFS', [Infinity, -Infinity, 1.5], { type: 'double', count: 3 }),
      ok('A:TEXT', 'NaN', { type: 'string', count: 1 }),
      ok('pva://A:ENUM', 2, { type: 'enum', enumStrings: ['a', 'b', 'c'], severity: 2, status: 3 }),
      ok('pva://A:BIG', '18446744073709551615', { type: 'ulong' }),
      ok('A:STRS', ['x, y', 'z"'], { type: 'string', count: 2 }),
      ok('A:BOOL', true, { type: 'boolean' }),
      ok('A:RO', 5, { readOnly: true }),
      { name: 'A:GONE', ok: false, error: 'ERR_EPICS_TIMEOUT: no answer' },
    ],
  };

  it('round-trips every kind of value and all the metadata, one line per PV', () => {
    const text = writeSnapshot(full);
    expect(text.split('\n')).toHaveLength(full.pvs.length + 2);
    expect(text.split('\n')[1]).toBe(
      '{"name":"A:DOUBLE","value":3.14159,"type":"double","count":1,"severity":0,"status":0,"time":"2025-11-25T12:00:00.123456789Z","units":"mm","precision":4}',
    );
    expect(parseSnapshot(text)).toEqual(full);
  });

  it('refuses what it cannot read, naming the line', () => {
    const text = writeSnapshot(full);
    const lines = text.split('\n');
    const bad = (t: string, msg: RegExp) => {
      expect(() => parseSnapshot(t, 'f.snapshot')).toThrow(BadArgumentError);
      expect(() => parseSnapshot(t, 'f.snapshot')).toThrow(msg);
    };
    bad(text.replace('"version":1', '"version":2'), /f\.snapshot line 1: format version 2, this version reads 1/);
    bad(lines.slice(0, 5).join('\n'), /the header says 10 PVs, the file has 4 \(cut short\?\)/);
    bad(
      text.replace('"time":"2025-11-25T12:00:00.123456789Z"', '"time":"yesterday"'),
      /f\.snapshot line 2 \(A:DOUBLE\): time must be ISO 8601/,
    );
    bad(text.replace('{"name":"A:NAN"', '{"name":"A:DOUBLE"'), /line 3: A:DOUBLE appears twice/);
    bad(text.replace('"value":true', '"value":{"x":1}'), /line 9 \(A:BOOL\): value must be/);
    bad('PV,READBACK\n', /line 1: not a JSON object/);
    bad('{"format":"other"}\n', /line 1: not an epicsperf-snapshot file/);
  });
});
