// Normative types: NTTable, NTNDArray and anything else (a plain object) from decoded values.
import { describe, expect, it } from 'vitest';
import { PvaReading } from '../../src/client/pva/reading.js';
import { ALARM_T, TIME_T } from '../../src/pva/nt.js';
import { any, scalar, scalarArray, structure, structureArray, toNT, union, type FieldDesc, type PvStructure } from '../../src/pva/index.js';

describe('normative types', () => {
  it('NTTable gives labels and typed columns', () => {
    const t = structure('epics:nt/NTTable:1.0', {
      labels: scalarArray('string'),
      value: structure('', { x: scalarArray('double'), n: scalarArray('string') }),
    });
    const v: PvStructure = { labels: ['X', 'Name'], value: { x: new Float64Array([1, 2]), n: ['a', 'b'] } };
    expect(toNT(t, v)).toEqual({ kind: 'NTTable', labels: ['X', 'Name'], columns: { x: new Float64Array([1, 2]), n: ['a', 'b'] } });
  });
  it('NTNDArray gives the selected array, dimensions and attributes', () => {
    const time = structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') });
    const t = structure('epics:nt/NTNDArray:1.0', {
      value: union('', { ubyteValue: scalarArray('ubyte'), doubleValue: scalarArray('double') }),
      codec: structure('codec_t', { name: scalar('string'), parameters: any() }),
      compressedSize: scalar('long'),
      uncompressedSize: scalar('long'),
      uniqueId: scalar('int'),
      dataTimeStamp: time,
      dimension: structureArray(
        structure('dimension_t', {
          size: scalar('int'),
          offset: scalar('int'),
          fullSize: scalar('int'),
          binning: scalar('int'),
          reverse: scalar('boolean'),
        }),
      ),
      attribute: structureArray(
        structure('epics:nt/NTAttribute:1.0', {
          name: scalar('string'),
          value: any(),
          descriptor: scalar('string'),
          sourceType: scalar('int'),
          source: scalar('string'),
        }),
      ),
    });
    const v: PvStructure = {
      value: { field: 'ubyteValue', value: new Uint8Array([1, 2, 3, 4, 5, 6]) },
      codec: { name: '', parameters: { type: null, value: null } },
      compressedSize: 6n,
      uncompressedSize: 6n,
      uniqueId: 7,
      dataTimeStamp: { secondsPastEpoch: 10n, nanoseconds: 5, userTag: 0 },
      dimension: [
        { size: 3, offset: 0, fullSize: 3, binning: 1, reverse: false },
        { size: 2, offset: 0, fullSize: 2, binning: 1, reverse: false },
      ],
      attribute: [{ name: 'ColorMode', value: { type: scalar('int'), value: 0 }, descriptor: '', sourceType: 0, source: '' }],
    };
    const nt = toNT(t, v);
    expect(nt).toMatchObject({
      kind: 'NTNDArray',
      value: new Uint8Array([1, 2, 3, 4, 5, 6]),
      uniqueId: 7,
      compressedSize: 6,
      dataTimeStamp: { secondsPastEpoch: 10 },
    });
    if (nt.kind === 'NTNDArray') {
      expect(nt.dimension.map((d) => d.size)).toEqual([3, 2]);
      expect(nt.attribute[0]).toMatchObject({ name: 'ColorMode', value: { value: 0 } });
    }
  });
  it('other structures and non-structures come back plain', () => {
    const t = structure('my:type', { a: scalar('int') });
    expect(toNT(t, { a: 1 })).toEqual({ kind: 'plain', id: 'my:type', value: { a: 1 } });
    expect(toNT(scalar('int'), 3)).toEqual({ kind: 'plain', id: '', value: 3 });
  });
});

describe("a reading's alarm and timestamp", () => {
  const ntScalar = (alarm: FieldDesc, timeStamp: FieldDesc) =>
    structure('epics:nt/NTScalar:1.0', { value: scalar('double'), alarm, timeStamp });
  const time = { secondsPastEpoch: 1_795_919_521n, nanoseconds: 5, userTag: 2 };
  it("QSRV's alarm_t and time_t: their fields; the seconds as a number", () => {
    const r = new PvaReading(ntScalar(ALARM_T, TIME_T), {
      value: 1.5,
      alarm: { severity: 2, status: 3, message: 'HIHI' },
      timeStamp: time,
    });
    expect([r.value, r.severity, r.status, r.message, r.secondsPastEpoch, r.nanoseconds, r.userTag]).toEqual([
      1.5,
      2,
      3,
      'HIHI',
      1_795_919_521,
      5,
      2,
    ]);
  });
  it('other field types (64-bit severity, 64-bit nanoseconds): converted to numbers', () => {
    const alarm = structure('', { severity: scalar('long'), status: scalar('int'), message: scalar('string') });
    const ts = structure('', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('ulong'), userTag: scalar('int') });
    const r = new PvaReading(ntScalar(alarm, ts), {
      value: 0,
      alarm: { severity: 1n, status: 4, message: 'LOW' },
      timeStamp: { ...time, nanoseconds: 7n },
    });
    expect([r.severity, r.status, r.message, r.secondsPastEpoch, r.nanoseconds]).toEqual([1, 4, 'LOW', 1_795_919_521, 7]);
  });
  it('an alarm and a timeStamp that are not structures, or none: zeros and an empty message', () => {
    const odd = new PvaReading(ntScalar(scalar('int'), scalar('string')), { value: 0, alarm: 3, timeStamp: 'now' });
    const none = new PvaReading(structure('', { value: scalar('int') }), { value: 9 });
    for (const r of [odd, none])
      expect([r.severity, r.status, r.message, r.secondsPastEpoch, r.nanoseconds, r.userTag]).toEqual([0, 0, '', 0, 0, 0]);
    expect(none.value).toBe(9);
  });
});
