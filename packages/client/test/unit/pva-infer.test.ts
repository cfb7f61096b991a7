// The PV Access type of a plain JavaScript value (RPC arguments and results, served structures).
import { describe, expect, it } from 'vitest';
import { formatType, isTyped, scalar, structure, typedOf } from '../../src/pva/index.js';

describe('typedOf', () => {
  it('numbers as doubles, bigints as longs, typed arrays as their own element type, objects as structures', () => {
    const t = typedOf(
      { d: 1, l: 2n, b: true, s: 'x', a: [1, 2], i: new Int32Array([3]), u: new Uint8Array(2), n: ['p'], o: { x: false } },
      'my_t',
    );
    expect(formatType(t.type)).toBe(
      formatType(
        structure('my_t', {
          d: scalar('double'),
          l: scalar('long'),
          b: scalar('boolean'),
          s: scalar('string'),
          a: { kind: 'scalarArray', type: 'double', array: 'variable' },
          i: { kind: 'scalarArray', type: 'int', array: 'variable' },
          u: { kind: 'scalarArray', type: 'ubyte', array: 'variable' },
          n: { kind: 'scalarArray', type: 'string', array: 'variable' },
          o: structure('structure', { x: scalar('boolean') }),
        }),
      ),
    );
    expect(t.value.a).toEqual(new Float64Array([1, 2]));
  });

  it('alarm and timeStamp objects are alarm_t and time_t, members not given at 0', () => {
    const t = typedOf({ alarm: { severity: 2 }, timeStamp: { secondsPastEpoch: 5 } });
    const [alarm, time] = t.type.fields;
    expect(alarm!.type.kind === 'structure' && alarm!.type.id).toBe('alarm_t');
    expect(time!.type.kind === 'structure' && time!.type.id).toBe('time_t');
    expect(t.value).toEqual({
      alarm: { severity: 2, status: 0, message: '' },
      timeStamp: { secondsPastEpoch: 5n, nanoseconds: 0, userTag: 0 },
    });
  });

  it('a typed structure is taken as it is; mixed arrays, null and functions are refused, naming the field', () => {
    const typed = { type: structure('s', { v: scalar('int') }), value: { v: 3 } };
    expect(isTyped(typed)).toBe(true);
    expect(isTyped({ type: 'x', value: 1 })).toBe(false);
    expect(typedOf(typed)).toEqual(typed);
    expect(() => typedOf({ a: { b: [1, 'x'] } })).toThrow(/a\.b: an array must hold only/);
    expect(() => typedOf({ n: null })).toThrow(/n: null has no PV Access type/);
    expect(() => typedOf({ f: () => 1 })).toThrow(/f: function has no PV Access type/);
  });
});
