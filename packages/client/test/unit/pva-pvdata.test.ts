// pvData: the specification's encoding examples, sizes, strings, bitsets, status, the
// introspection cache, 64-bit arrays, unions, any, structure arrays, partial (de)serialization
// with the type's defaults in the fields a reply does not mark.
import { describe, expect, it } from 'vitest';
import {
  any,
  anyArray,
  BitSet,
  bitCount,
  bitOffset,
  boundedString,
  buildPvRequest,
  DecodeError,
  decodeMessage,
  decodePartial,
  decodeStatus,
  decodeInto,
  decodeType,
  decodeUpdate,
  decodeValue,
  defaultValue,
  encodePartial,
  encodeStatus,
  encodeType,
  encodeValue,
  monitorOptions,
  parsePvRequest,
  Reader,
  scalar,
  updateBase,
  scalarArray,
  structure,
  structureArray,
  toNT,
  TypeCache,
  TypeRegistry,
  union,
  unionArray,
  Writer,
  type FieldDesc,
  type PvStructure,
  type PvValue,
  type StructureDesc,
} from '../../src/pva/index.js';
import { bytes, headerOf, hex, loadFixture } from '../helpers/pva-fixtures.js';

const enc = (f: (w: Writer) => void, le = false): string => {
  const w = new Writer(le);
  f(w);
  return hex(w.take());
};
const rd = (h: string, le = false): Reader => new Reader(bytes(h), le);

describe('sizes and strings', () => {
  it('1-byte and 5-byte sizes, null', () => {
    expect(enc((w) => w.size(0))).toBe('00');
    expect(enc((w) => w.size(253))).toBe('fd');
    expect(enc((w) => w.size(254))).toBe('fe000000fe');
    expect(enc((w) => w.size(254), true)).toBe('fefe000000');
    expect(enc((w) => w.size(-1))).toBe('ff');
    expect(rd('fe00010000').size()).toBe(65536);
    expect(rd('ff').size()).toBe(-1);
  });
  it('UTF-8 strings count bytes', () => {
    expect(enc((w) => w.string('é'))).toBe('02c3a9');
    expect(rd('02c3a9').string()).toBe('é');
    const long = 'x'.repeat(300);
    expect(rd(enc((w) => w.string(long))).string()).toBe(long);
  });
});

describe('introspection', () => {
  const timeStamp = structure('timeStamp_t', { secondsPastEpoch: scalar('long'), nanoSeconds: scalar('int'), userTag: scalar('int') });
  it('specification example 1: a structure defined with id 1', () => {
    const want =
      'fd000180 0b74696d655374616d705f74 03 107365636f6e64735061737445706f6368 23 0b6e616e6f5365636f6e6473 22 0775736572546167 22';
    const reg = new TypeRegistry();
    expect(enc((w) => encodeType(w, timeStamp, reg))).toBe(hex(bytes(want)));
    const cache = new TypeCache();
    expect(decodeType(rd(want), cache)).toEqual(timeStamp);
    // Later references by id resolve from the cache; the sender sends only the id.
    expect(enc((w) => encodeType(w, timeStamp, reg))).toBe('fe0001');
    expect(decodeType(rd('fe0001'), cache)).toEqual(timeStamp);
  });
  it('a reference to an id never defined is a protocol error, not a throw', () => {
    expect(() => decodeType(rd('fe0009'), new TypeCache())).toThrow(/unknown type id 9/);
    const b = bytes('ca02401108000000 01000000 ff fe0009');
    const m = decodeMessage(headerOf(b), b.subarray(8), { types: new TypeCache() });
    expect(m).toMatchObject({ type: 'Invalid', command: 0x11 });
    expect((m as { reason: string }).reason).toMatch(/unknown type id/);
  });
  it('every kind round-trips, null is 0xFF', () => {
    const u = union('', { s: scalar('string'), i: scalar('int') });
    const kinds: FieldDesc[] = [
      ...(['boolean', 'byte', 'short', 'int', 'long', 'ubyte', 'ushort', 'uint', 'ulong', 'float', 'double', 'string'] as const).flatMap(
        (t) => [scalar(t), scalarArray(t)],
      ),
      scalarArray('byte', 'bounded', 16),
      scalarArray('double', 'fixed', 4),
      boundedString(8),
      timeStamp,
      structureArray(timeStamp),
      u,
      unionArray(u),
      any(),
      anyArray(),
    ];
    for (const k of kinds) {
      const h = enc((w) => encodeType(w, k));
      expect(decodeType(rd(h), undefined), h).toEqual(k);
    }
    expect(enc((w) => encodeType(w, null))).toBe('ff');
    expect(decodeType(rd('ff'), undefined)).toBeNull();
    expect(enc((w) => encodeType(w, scalar('ulong')))).toBe('27');
    expect(enc((w) => encodeType(w, scalarArray('long')))).toBe('2b');
    expect(enc((w) => encodeType(w, boundedString(8)))).toBe('8308');
    expect(decodeType(rd('8608'), undefined)).toEqual(boundedString(8));
  });
  it('bit offsets of nested fields', () => {
    const t = structure('', { timeStamp, value: scalar('double'), alarm: structure('', { severity: scalar('int') }) });
    expect(bitCount(t)).toBe(8);
    expect(bitOffset(t, 'value')).toBe(5);
    expect(bitOffset(t, 'alarm.severity')).toBe(7);
    expect(bitOffset(t, 'nope')).toBeUndefined();
  });
});

describe('values', () => {
  it('specification encoding example (big-endian, 85 bytes)', () => {
    const t = structure('', {
      value: scalarArray('byte'),
      boundedSizeArray: scalarArray('byte', 'bounded', 16),
      fixedSizeArray: scalarArray('byte', 'fixed', 4),
      timeStamp: structure('', { secondsPastEpoch: scalar('long'), nanoSeconds: scalar('int'), userTag: scalar('int') }),
      alarm: structure('', { severity: scalar('int'), status: scalar('int'), message: scalar('string') }),
      valueUnion: union('', { stringValue: scalar('string'), intValue: scalar('int') }),
      variantUnion: any(),
    });
    const v: PvStructure = {
      value: new Int8Array([1, 2, 3]),
      boundedSizeArray: new Int8Array([4, 5, 6, 7, 8]),
      fixedSizeArray: new Int8Array([9, 10, 11, 12]),
      timeStamp: { secondsPastEpoch: 0x1122334455667788n, nanoSeconds: 0xaabbccdd | 0, userTag: 0xeeeeeeee | 0 },
      alarm: { severity: 0x11111111, status: 0x22222222, message: 'Allo, Allo!' },
      valueUnion: { field: 'intValue', value: 0x33333333 },
      variantUnion: { type: scalar('string'), value: 'String inside variant union.' },
    };
    const want = `030102030504050607080 90a0b0c1122334455667788aabbccddeeeeeeee1111111122222222 0b416c6c6f2c20416c6c6f21 0133333333 60 1c537472696e6720696e736964652076617269616e7420756e696f6e2e`;
    const got = enc((w) => encodeValue(w, t, v));
    expect(got).toBe(hex(bytes(want)));
    expect(bytes(got).length).toBe(85);
    expect(decodeValue(rd(got), t, undefined)).toEqual(v);
  });
  it('64-bit integers read one after another: each its own value, signed or not, in either byte order (one bigint for repeats)', () => {
    const bytes = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 1, 0, 0, 0, 0, 0, 0, 0]);
    const again = (le: boolean) => new Reader(bytes, le);
    for (let k = 0; k < 2; k++) {
      const le = again(true);
      expect([le.i64(), le.i64()]).toEqual([-(2n ** 56n) - 1n, 1n]);
      expect(again(true).u64()).toBe(2n ** 64n - 2n ** 56n - 1n);
      const be = again(false);
      expect([be.i64(), be.u64()]).toEqual([-2n, 2n ** 56n]);
      expect(again(false).u64()).toBe(2n ** 64n - 2n);
    }
  });

  it("a count of 64-bit values (a timestamp's seconds, with late ones and other values between): each read as its value", () => {
    // Values of a count are made ahead of it (src/pva/buffer.ts): what is read must not show it.
    const seq: bigint[] = [];
    const s0 = 1_795_919_521n;
    for (let k = 0n; k < 40n; k++) {
      seq.push(s0 + k, s0 + k, 7n, s0 + k);
      if (k % 5n === 4n) seq.push(s0 + k - 3n, s0 + k + 20n); // late, and one far ahead
    }
    for (let k = -20n; k <= 20n; k++) seq.push(k, k); // through zero
    const edge = 2n ** 53n;
    for (let k = -20n; k <= 3n; k++) seq.push(edge + k); // up to and past the safe integers
    seq.push(2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n - 2n);
    for (const le of [true, false]) {
      const bytes = enc((w) => {
        for (const v of seq) w.i64(v);
      }, le);
      const r = rd(bytes, le);
      expect(seq.map(() => r.i64())).toEqual(seq);
      const u = rd(bytes, le);
      expect(seq.map(() => u.u64())).toEqual(seq.map((v) => BigInt.asUintN(64, v)));
    }
  });

  it('64-bit and other numeric arrays are typed arrays, both byte orders', () => {
    const cases: [FieldDesc, PvValue][] = [
      [scalarArray('long'), new BigInt64Array([-1n, 2n ** 62n])],
      [scalarArray('ulong'), new BigUint64Array([2n ** 64n - 1n])],
      [scalarArray('short'), new Int16Array([-2, 300])],
      [scalarArray('float'), new Float32Array([1.5, -2])],
      [scalarArray('boolean'), [true, false]],
      [scalarArray('string'), ['a', 'bé']],
      [scalar('ulong'), 2n ** 64n - 1n],
    ];
    for (const le of [true, false])
      for (const [t, v] of cases)
        expect(
          decodeValue(
            rd(
              enc((w) => encodeValue(w, t, v), le),
              le,
            ),
            t,
            undefined,
          ),
        ).toEqual(v);
    expect(enc((w) => encodeValue(w, scalarArray('short'), new Int16Array([1])))).toBe('010001');
    expect(enc((w) => encodeValue(w, scalarArray('short'), [1]), true)).toBe('010100');
  });
  it('structure arrays with null elements (specification example), union arrays, any arrays', () => {
    const s = structure('', { a: scalar('short'), b: scalar('short') });
    const v = [{ a: 0x1111, b: 0x2222 }, null, { a: 0x3333, b: 0x4444 }];
    expect(enc((w) => encodeValue(w, structureArray(s), v))).toBe('030111112222000133334444');
    expect(decodeValue(rd('030111112222000133334444'), structureArray(s), undefined)).toEqual(v);
    const u = union('', { x: scalar('byte') });
    const uv = [{ field: 'x', value: 5 }, null, { field: null, value: null }];
    expect(decodeValue(rd(enc((w) => encodeValue(w, unionArray(u), uv))), unionArray(u), undefined)).toEqual(uv);
    const av = [
      { type: scalar('int'), value: 7 },
      { type: null, value: null },
    ];
    expect(decodeValue(rd(enc((w) => encodeValue(w, anyArray(), av))), anyArray(), undefined)).toEqual(av);
  });
  it('a union selector out of range and oversized counts are errors', () => {
    expect(() => decodeValue(rd('05'), union('', { x: scalar('byte') }), undefined)).toThrow(/selector/);
    expect(() => decodeValue(rd('fe7ffffff0'), scalarArray('double'), undefined)).toThrow(/truncated/);
  });
});

describe('bitsets', () => {
  // Little-endian vectors of the specification (its examples use that order for whole words).
  const vectors: [number[], string][] = [
    [[], '00'],
    [[0], '0101'],
    [[1], '0102'],
    [[7], '0180'],
    [[8], '020001'],
    [[15], '020080'],
    [[16, 23], '03000081'],
    [[31], '0400000080'],
    [[0, 32], '050100000001'],
    [[55], '07000000000000 80'],
    [[56], '080000000000000001'],
    [[63], '080000000000000080'],
    [[64], '09000000000000000001'],
    [[65], '09000000000000000002'],
    [[0, 1, 2, 4], '0117'],
    [[0, 1, 2, 4, 8], '021701'],
    [[8, 17, 24, 25, 34, 40, 42, 49, 50, 56, 57, 58, 67], '0900010203040506070 8'],
  ];
  it.each(vectors)('%j', (bits, h) => {
    expect(enc((w) => BitSet.of(...bits).encode(w), true)).toBe(hex(bytes(h)));
    expect(BitSet.decode(rd(h, true)).toArray()).toEqual(bits);
  });
  it('whole words follow the byte order; trailing bytes do not', () => {
    const b = BitSet.of(0, 57, 64);
    expect(enc((w) => b.encode(w), false)).toBe('09' + '0200000000000001' + '01');
    expect(enc((w) => b.encode(w), true)).toBe('09' + '0100000000000002' + '01');
    expect(BitSet.decode(rd(enc((w) => b.encode(w), false))).toArray()).toEqual([0, 57, 64]);
  });
  it('a set whose bits were cleared is empty on the wire', () => {
    expect(enc((w) => BitSet.of(3).clear(3).encode(w), true)).toBe('00');
    expect(enc((w) => BitSet.of(3, 40).clear(40).encode(w), true)).toBe('0108');
  });
  it('or, anyIn, clear', () => {
    const a = BitSet.of(1).or(BitSet.of(40));
    expect(a.toArray()).toEqual([1, 40]);
    expect(a.anyIn(2, 40)).toBe(false);
    expect(a.anyIn(2, 41)).toBe(true);
    expect(a.clear(40).toArray()).toEqual([1]);
  });
});

describe('status', () => {
  it('OK shortcut, warning and error with message and call tree', () => {
    expect(enc((w) => encodeStatus(w, { type: 0, message: '', callTree: '' }))).toBe('ff');
    expect(enc((w) => encodeStatus(w, { type: 1, message: 'Low memory', callTree: '' }))).toBe('010a4c6f77206d656d6f727900');
    expect(decodeStatus(rd('ff'))).toEqual({ type: 0, message: '', callTree: '' });
    expect(decodeStatus(rd('0203626164026174'))).toEqual({ type: 2, message: 'bad', callTree: 'at' });
  });
});

describe('partial values', () => {
  const type = structure('epics:nt/NTScalar:1.0', {
    value: scalar('double'),
    alarm: structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') }),
    timeStamp: structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') }),
  });
  it('only selected fields travel; updates merge into the kept value', () => {
    const full = defaultValue(type) as PvStructure;
    const src: PvStructure = {
      value: 1.5,
      alarm: { severity: 2, status: 3, message: 'HIHI' },
      timeStamp: { secondsPastEpoch: 5n, nanoseconds: 6, userTag: 0 },
    };
    const bits = BitSet.of(1, 2, 8); // value, alarm (whole), timeStamp.nanoseconds
    const h = enc((w) => encodePartial(w, type, src, bits), true);
    expect(h).toBe(hex(bytes('000000000000f83f 02000000 03000000 04 48494849 06000000')));
    decodePartial(rd(h, true), type, full, bits, undefined);
    expect(full).toEqual({
      value: 1.5,
      alarm: { severity: 2, status: 3, message: 'HIHI' },
      timeStamp: { secondsPastEpoch: 0n, nanoseconds: 6, userTag: 0 },
    });
    decodePartial(
      rd(
        enc((w) => encodePartial(w, type, { value: 9 } as PvStructure, BitSet.of(1)), true),
        true,
      ),
      type,
      full,
      BitSet.of(1),
      undefined,
    );
    expect(full.value).toBe(9);
    expect((full.alarm as PvStructure).message).toBe('HIHI');
    expect(toNT(type, full)).toMatchObject({ kind: 'NTScalar', value: 9, alarm: { severity: 2 }, timeStamp: { nanoseconds: 6 } });
  });
  it('bit 0 replaces the whole structure', () => {
    const full = defaultValue(type) as PvStructure;
    const src: PvStructure = {
      value: 2,
      alarm: { severity: 1, status: 0, message: '' },
      timeStamp: { secondsPastEpoch: 1n, nanoseconds: 0, userTag: 0 },
    };
    decodePartial(rd(enc((w) => encodePartial(w, type, src, BitSet.of(0)))), type, full, BitSet.of(0), undefined);
    expect(full).toEqual(src);
  });
});

describe('a reply that marks some fields: every field of the type, defaults in the others', () => {
  const limits = structure('', { active: scalar('boolean'), lowAlarmLimit: scalar('double'), highAlarmSeverity: scalar('int') });
  const type = structure('epics:nt/NTEnum:1.0', {
    value: structure('enum_t', { index: scalar('int'), choices: scalarArray('string') }),
    alarm: structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') }),
    timeStamp: structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') }),
    display: structure('', { units: scalar('string'), precision: scalar('int'), tag: boundedString(8) }),
    valueAlarm: limits,
    samples: scalarArray('double'),
    counts: scalarArray('ulong'),
    flags: scalarArray('boolean'),
    fixed: scalarArray('short', 'fixed', 3),
    pick: union('', { n: scalar('int'), s: scalar('string') }),
    extra: any(),
    rows: structureArray(structure('', { x: scalar('int') })),
  });
  // value.index, alarm.message and the whole of display, as QSRV marks what it fills.
  const paths = ['value.index', 'alarm.message', 'display'];
  const bits = BitSet.of(...paths.map((p) => bitOffset(type, p)!));
  const sent: PvStructure = {
    value: { index: 2, choices: [] },
    alarm: { severity: 0, status: 0, message: 'HIGH' },
    timeStamp: {},
    display: { units: 'mm', precision: 3, tag: 't' },
  } as unknown as PvStructure;
  const want = {
    value: { index: 2, choices: [] },
    alarm: { severity: 0, status: 0, message: 'HIGH' },
    timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0, userTag: 0 },
    display: { units: 'mm', precision: 3, tag: 't' },
    valueAlarm: { active: false, lowAlarmLimit: 0, highAlarmSeverity: 0 },
    samples: new Float64Array(0),
    counts: new BigUint64Array(0),
    flags: [],
    fixed: new Int16Array(3),
    pick: { field: null, value: null },
    extra: { type: null, value: null },
    rows: [],
  };
  const reply = (le: boolean): Reader =>
    rd(
      enc((w) => encodePartial(w, type, sent, bits), le),
      le,
    );

  it("the session's decode (a GET reply, a monitor's first update)", () => {
    for (const le of [true, false]) {
      const r = reply(le);
      const v = decodeUpdate(r, type, undefined, bits, undefined);
      expect(r.remaining).toBe(0);
      expect(v).toStrictEqual(want);
      expect(Object.keys(v)).toEqual(type.fields.map((f) => f.name));
    }
  });

  it('the generic decode gives the same', () => {
    const v = defaultValue(type) as PvStructure;
    decodePartial(reply(true), type, v, bits, undefined);
    expect(v).toStrictEqual(want);
  });

  it('a later update keeps the last value of the fields it does not mark, and leaves the last value as it was', () => {
    const first = decodeUpdate(reply(true), type, undefined, bits, undefined);
    const snapshot = structuredClone(first);
    const b2 = BitSet.of(bitOffset(type, 'valueAlarm.active')!, bitOffset(type, 'samples')!);
    const upd = {
      ...want,
      valueAlarm: { active: true, lowAlarmLimit: 0, highAlarmSeverity: 0 },
      samples: new Float64Array([1, 2]),
    } as unknown as PvStructure;
    const next = decodeUpdate(
      rd(
        enc((w) => encodePartial(w, type, upd, b2), true),
        true,
      ),
      type,
      first,
      b2,
      undefined,
    );
    expect(next).toStrictEqual({
      ...want,
      valueAlarm: { active: true, lowAlarmLimit: 0, highAlarmSeverity: 0 },
      samples: new Float64Array([1, 2]),
    });
    expect(next.display).toBe(first.display); // untouched structures are shared, not copied
    expect(first).toStrictEqual(snapshot);
  });

  it('a type that names its parts many times by id: a DecodeError, not a value that fills memory', () => {
    let bomb = structure('', { x: scalar('double') });
    for (let i = 0; i < 40; i++) bomb = structure('', { a: bomb, b: bomb }); // 2^40 doubles in 41 types
    const top = structure('', { v: scalar('int'), big: bomb });
    expect(() => defaultValue(top)).toThrow(DecodeError);
    expect(() =>
      decodeUpdate(
        rd(
          enc((w) => w.i32(1), true),
          true,
        ),
        top,
        undefined,
        BitSet.of(1),
        undefined,
      ),
    ).toThrow(/more than \d+ fields/);
    let deep: FieldDesc = scalar('int');
    for (let i = 0; i < 100; i++) deep = structure('', { d: deep });
    expect(() => defaultValue(deep)).toThrow(/nesting too deep/);
  });
});

describe('selections written by code made for them', () => {
  // A server's update is written by code made for its type and selection, a type's first 16
  // selections; the 17th on is written by the walk over the type. Two copies of one type, their
  // selections taken in opposite orders: each selection is written once each way.
  const make = (): StructureDesc =>
    structure('epics:nt/NTEnum:1.0', {
      value: structure('enum_t', { index: scalar('int'), choices: scalarArray('string') }),
      alarm: structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') }),
      timeStamp: structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') }),
      display: structure('', { units: scalar('string'), precision: scalar('short'), tag: boundedString(8) }),
      valueAlarm: structure('', { active: scalar('boolean'), low: scalar('float'), n: scalar('ubyte'), big: scalar('ulong') }),
      samples: scalarArray('double'),
      pick: union('', { n: scalar('int'), s: scalar('string') }),
      extra: any(),
      rows: structureArray(structure('', { x: scalar('int') })),
    });
  // Values that need converting (bigint, boolean, number to long) and fields left out (their defaults).
  const value = {
    value: { index: 2n, choices: ['a', 'b', 'c'] },
    alarm: { severity: true, status: 2, message: 'HIHI' },
    timeStamp: { secondsPastEpoch: 7, nanoseconds: 8 },
    display: { units: 'mm', precision: 3n, tag: 't' },
    valueAlarm: { active: 1, low: 1.5, n: 255, big: 9n },
    samples: [1, 2.5],
    pick: { field: 's', value: 'x' },
    extra: { type: scalar('int'), value: 5 },
    rows: [{ x: 1 }, null],
  } as unknown as PvStructure;
  const a = make();
  const n = bitCount(a);
  const selections = [...Array.from({ length: n }, (_, i) => [i]), ...Array.from({ length: n - 3 }, (_, i) => [i + 1, i + 3])].slice(0, 32);
  it('the same bytes either way, in both byte orders', () => {
    expect(selections.length).toBe(32);
    for (const le of [true, false]) {
      const [x, y] = [make(), make()];
      const first = selections.map((s) => enc((w) => encodePartial(w, x, value, BitSet.of(...s)), le));
      const second = [...selections].reverse().map((s) => enc((w) => encodePartial(w, y, value, BitSet.of(...s)), le));
      expect(first).toEqual(second.reverse());
    }
  });
  it('what the selection carries, decoded', () => {
    const t = make();
    const bits = BitSet.of(bitOffset(t, 'alarm')!, bitOffset(t, 'timeStamp.secondsPastEpoch')!, bitOffset(t, 'valueAlarm')!);
    const full = defaultValue(t) as PvStructure;
    decodePartial(rd(enc((w) => encodePartial(w, t, value, bits))), t, full, bits, undefined);
    expect(full.alarm).toEqual({ severity: 1, status: 2, message: 'HIHI' });
    expect(full.timeStamp).toEqual({ secondsPastEpoch: 7n, nanoseconds: 0, userTag: 0 });
    expect(full.valueAlarm).toEqual({ active: true, low: 1.5, n: 255, big: 9n });
  });
  it('a value that does not fit its type is refused as the walk refuses it', () => {
    const t = make();
    const bits = BitSet.of(bitOffset(t, 'valueAlarm.low')!);
    const bad = { valueAlarm: { low: 'x' } } as unknown as PvStructure;
    const walk = (() => {
      try {
        encodeValue(new Writer(), scalar('float'), 'x');
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(() => encodePartial(new Writer(), t, bad, bits)).toThrow(new TypeError(walk));
    expect(() => encodePartial(new Writer(), t, { alarm: 5 } as unknown as PvStructure, BitSet.of(bitOffset(t, 'alarm')!))).toThrow(
      TypeError,
    );
  });
});

/** Symbol keys in a value's structures. */
const symbolsIn = (v: unknown): number =>
  typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)
    ? Object.getOwnPropertySymbols(v).length + Object.values(v).reduce((n: number, x) => n + symbolsIn(x), 0)
    : 0;

describe('monitor updates: every set of marked fields decodes to the last value with those fields replaced', () => {
  // A type with nested structures, scalars of every reader, arrays, a union and a string: the
  // updates' decode is compiled per set of marked fields (16 per type), the others walk the type.
  const type = structure('epics:nt/NTScalar:1.0', {
    value: scalar('double'),
    alarm: structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') }),
    timeStamp: structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') }),
    display: structure('', {
      limits: structure('', { low: scalar('float'), high: scalar('float'), on: scalar('boolean') }),
      units: scalar('string'),
      count: scalar('ulong'),
      small: structure('', { b: scalar('byte'), ub: scalar('ubyte'), s: scalar('short'), us: scalar('ushort'), u: scalar('uint') }),
    }),
    samples: scalarArray('double'),
    pick: union('', { n: scalar('int'), s: scalar('string') }),
  });
  const a = {
    value: 1.5,
    alarm: { severity: 1, status: 3, message: 'HIGH' },
    timeStamp: { secondsPastEpoch: 100n, nanoseconds: 5, userTag: 0 },
    display: {
      limits: { low: -1, high: 1, on: false },
      units: 'mm',
      count: 7n,
      small: { b: -1, ub: 1, s: -2, us: 2, u: 3 },
    },
    samples: new Float64Array([1, 2]),
    pick: { field: 'n', value: 4 },
  } as unknown as PvStructure;
  const b = {
    value: -2.25,
    alarm: { severity: 2, status: 4, message: 'HIHI' },
    timeStamp: { secondsPastEpoch: 200n, nanoseconds: 9, userTag: 8 },
    display: {
      limits: { low: -4, high: 4, on: true },
      units: 'µm',
      count: 9n,
      small: { b: -5, ub: 5, s: -6, us: 6, u: 7 },
    },
    samples: new Float64Array([3]),
    pick: { field: 's', value: 'x' },
  } as unknown as PvStructure;
  // What an update marking `bits` must give: `b`'s fields where marked, `a`'s elsewhere.
  const merge = (d: StructureDesc, prev: PvStructure, next: PvStructure, bits: BitSet, base: number): PvStructure => {
    const out: PvStructure = {};
    let off = base + 1;
    for (const f of d.fields) {
      const span = f.type.kind === 'structure' ? bitCount(f.type) : 1;
      if (bits.get(off)) out[f.name] = next[f.name]!;
      else if (span > 1 && bits.anyIn(off + 1, off + span))
        out[f.name] = merge(f.type as StructureDesc, prev[f.name] as PvStructure, next[f.name] as PvStructure, bits, off);
      else out[f.name] = prev[f.name]!;
      off += span;
    }
    return out;
  };
  const total = bitCount(type);
  const display = bitOffset(type, 'display')!;
  const displayEnd = display + bitCount(type.fields[3]!.type as StructureDesc);

  it('40 sets of marked fields, each decoded twice (compiled plans and the walk beyond them), in both byte orders', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let k = 0; k < 40; k++) {
      const bits = new BitSet();
      for (let i = 1; i < total; i++) if (random() < 0.3) bits.set(i);
      if (bits.isEmpty()) bits.set(1);
      const want = merge(type, a, b, bits, 0);
      for (const le of [true, false])
        for (let twice = 0; twice < 2; twice++) {
          const r = rd(
            enc((w) => encodePartial(w, type, b, bits), le),
            le,
          );
          const got = decodeUpdate(r, type, a, bits, undefined);
          expect(r.remaining).toBe(0);
          expect(got).toStrictEqual(want);
          // What the update does not mark is the last value's own, not a copy.
          if (!bits.anyIn(display, displayEnd)) expect(got.display).toBe(a.display);
        }
    }
  });

  it("a monitor's base: 80 updates of random fields (whole structures, the whole value), each as marked on the last, none changed later, unmarked structures shared", () => {
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (const le of [true, false]) {
      const base = updateBase(type);
      let want = defaultValue(type) as PvStructure;
      const given: [PvStructure, PvStructure][] = [];
      let last: PvStructure | undefined;
      let lastTouchedDisplay = true;
      for (let k = 0; k < 80; k++) {
        const bits = new BitSet();
        if (random() < 0.1) bits.set(0);
        else for (let i = 1; i < total; i++) if (random() < 0.25) bits.set(i);
        if (bits.isEmpty()) bits.set(1);
        const next = k % 2 ? a : b;
        want = bits.get(0) ? next : merge(type, want, next, bits, 0);
        const r = rd(
          enc((w) => encodePartial(w, type, next, bits), le),
          le,
        );
        const got = decodeInto(r, type, base, bits, undefined);
        expect(r.remaining).toBe(0);
        expect(got).toStrictEqual(want);
        const touchedDisplay = bits.get(0) || bits.anyIn(display, displayEnd);
        if (last && !touchedDisplay && !lastTouchedDisplay) expect(got.display).toBe(last.display);
        expect(symbolsIn(got)).toBe(0); // a base's own structures are never given out
        given.push([got, structuredClone(got)]);
        last = got;
        lastTouchedDisplay = touchedDisplay;
      }
      for (const [got, copy] of given) expect(got).toStrictEqual(copy);
    }
  });

  it("a monitor's base of 40 structures (the mask of own fields shares its last bit from the 32nd on): 60 updates as marked, unmarked structures shared", () => {
    const fields: Record<string, FieldDesc> = {};
    for (let i = 0; i < 40; i++) fields[`s${i}`] = structure('', { x: scalar('int'), y: structure('', { z: scalar('int') }) });
    const wide = structure('', fields);
    const n = bitCount(wide);
    const sample = (k: number): PvStructure => {
      const v: PvStructure = {};
      for (let i = 0; i < 40; i++) v[`s${i}`] = { x: k * 100 + i, y: { z: -k } };
      return v;
    };
    const spans = wide.fields.map((f) => bitOffset(wide, f.name)!);
    let seed = 5;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const base = updateBase(wide);
    let want = defaultValue(wide) as PvStructure;
    let last: PvStructure | undefined;
    let lastBits: BitSet | undefined;
    const given: [PvStructure, PvStructure][] = [];
    // Whether an update marking `bits` touches structure field i (its bit, x, y or z).
    const touches = (bits: BitSet, i: number) => bits.anyIn(spans[i]!, spans[i]! + 4);
    for (let k = 1; k <= 60; k++) {
      const bits = new BitSet();
      for (let i = 1; i < n; i++) if (random() < 0.08) bits.set(i);
      if (bits.isEmpty()) bits.set(spans[35]! + 3);
      const next = sample(k);
      want = merge(wide, want, next, bits, 0);
      const got = decodeInto(
        rd(
          enc((w) => encodePartial(w, wide, next, bits), true),
          true,
        ),
        wide,
        base,
        bits,
        undefined,
      );
      expect(got).toStrictEqual(want);
      expect(symbolsIn(got)).toBe(0);
      if (last && lastBits)
        for (let i = 0; i < 40; i++) if (!touches(bits, i) && !touches(lastBits, i)) expect(got[`s${i}`]).toBe(last[`s${i}`]);
      given.push([got, structuredClone(got)]);
      last = got;
      lastBits = bits;
    }
    // None changed later (a structure from the 32nd on is the base's own by its own key, not its bit).
    for (const [got, copy] of given) expect(got).toStrictEqual(copy);
  });

  it("monitors of one type share a structure their updates leave alone when its fields are the same (many counters' alarms), and only then", () => {
    const alarmBits = BitSet.of(bitOffset(type, 'alarm.severity')!, bitOffset(type, 'alarm.message')!);
    const valueBits = BitSet.of(bitOffset(type, 'value')!);
    const update = (base: ReturnType<typeof updateBase>, v: PvStructure, bits: BitSet) =>
      decodeInto(
        rd(
          enc((w) => encodePartial(w, type, v, bits), true),
          true,
        ),
        type,
        base,
        bits,
        undefined,
      );
    const alarmOf = (severity: number, message: string) => ({ ...a, alarm: { severity, status: 3, message } }) as PvStructure;
    // Four monitors: the first whole value, then the value alone (their alarm is given from then on).
    const bases = [0, 1, 2, 3].map(() => updateBase(type));
    const alarms = bases.map((base, i) => {
      update(base, alarmOf(i === 2 ? 2 : 1, i === 3 ? 'HIHI' : 'HIGH'), BitSet.of(0));
      return update(base, a, valueBits).alarm;
    });
    expect(alarms[1]).toBe(alarms[0]);
    expect(alarms[2]).not.toBe(alarms[0]);
    expect(alarms[3]).not.toBe(alarms[0]);
    expect(alarms).toStrictEqual([
      { severity: 1, status: 3, message: 'HIGH' },
      { severity: 1, status: 3, message: 'HIGH' },
      { severity: 2, status: 3, message: 'HIGH' },
      { severity: 1, status: 3, message: 'HIHI' },
    ]);
    // The first one's alarm changes: the second's, shared until then, does not.
    expect(update(bases[0]!, alarmOf(0, ''), alarmBits).alarm).toStrictEqual({ severity: 0, status: 3, message: '' });
    expect(update(bases[1]!, a, valueBits).alarm).toBe(alarms[1]);
    expect(alarms[1]).toStrictEqual({ severity: 1, status: 3, message: 'HIGH' });
  });

  it("a monitor's base of a type no plan is compiled for (a field named __proto__): the same values, as own fields", () => {
    const inner: StructureDesc = {
      kind: 'structure',
      id: '',
      fields: [
        { name: '__proto__', type: scalar('int') },
        { name: 'y', type: scalar('int') },
      ],
    };
    const odd = structure('', { s: inner, z: scalar('int') });
    const base = updateBase(odd);
    const send = (x: number, y: number, z: number, bits: BitSet) => {
      const s: PvStructure = { y };
      Object.defineProperty(s, '__proto__', { value: x, enumerable: true });
      const bytes = enc((w) => encodePartial(w, odd, { s, z }, bits), true);
      return decodeInto(rd(bytes, true), odd, base, bits, undefined);
    };
    const [xBit, yBit, zBit] = ['s.__proto__', 's.y', 'z'].map((f) => bitOffset(odd, f)!);
    const seq = [
      send(1, 2, 3, BitSet.of(0)),
      send(4, 5, 6, BitSet.of(xBit!)),
      send(7, 8, 9, BitSet.of(zBit!)),
      send(10, 11, 12, BitSet.of(yBit!, zBit!)),
      send(13, 14, 15, BitSet.of(zBit!)),
    ];
    const pick = (v: PvStructure) => {
      const s = v.s as PvStructure;
      return [Object.getOwnPropertyDescriptor(s, '__proto__')?.value, s.y, v.z, Object.getPrototypeOf(s) === Object.prototype];
    };
    expect(seq.map(pick)).toEqual([
      [1, 2, 3, true],
      [4, 2, 3, true],
      [4, 2, 9, true],
      [4, 11, 12, true],
      [4, 11, 15, true],
    ]);
    expect(seq.reduce((n, v) => n + symbolsIn(v), 0)).toBe(0);
  });

  it('a truncated update is a DecodeError, compiled or not', () => {
    const bits = BitSet.of(1, bitOffset(type, 'timeStamp.secondsPastEpoch')!);
    const h = enc((w) => encodePartial(w, type, b, bits), true);
    for (let i = 0; i < 3; i++) expect(() => decodeUpdate(rd(h.slice(0, -2), true), type, a, bits, undefined)).toThrow(DecodeError);
  });
});

describe('pvRequest', () => {
  it('matches the bytes a p4p client sent', () => {
    const mon = loadFixture('monitor').find((m) => m.dir === 'c2s' && m.bytes[3] === 0x0d)!.bytes;
    const w = new Writer(true);
    const req = buildPvRequest('field(value,alarm,timeStamp)record[queueSize=4,pipeline=true]');
    encodeType(w, req.type);
    encodeValue(w, req.type, req.value);
    expect(hex(mon)).toContain(hex(w.take()));
    expect(monitorOptions(req)).toEqual({ queueSize: 4, pipeline: true });
    const get = loadFixture('get').find((m) => m.dir === 'c2s' && m.bytes[3] === 0x0a)!.bytes;
    const e = buildPvRequest('field()');
    const w2 = new Writer(true);
    encodeType(w2, e.type);
    expect(hex(get).endsWith(hex(w2.take()))).toBe(true);
  });
  it('parses nested fields, bare lists and options', () => {
    expect(parsePvRequest('field(value,alarm.severity)record[process=true]')).toEqual({
      fields: ['value', 'alarm.severity'],
      record: { process: 'true' },
    });
    expect(parsePvRequest('value,timeStamp')).toEqual({ fields: ['value', 'timeStamp'] });
    expect(buildPvRequest({ fields: ['alarm.severity'] }).value).toEqual({ field: { alarm: { severity: {} } } });
    expect(() => parsePvRequest('field(value')).toThrow();
  });
});
