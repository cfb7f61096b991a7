// What a PV Access put sends for a typed array: the array itself when it is of the field's type
// (its bytes are then written at once), else converted element by element, an integer field
// taking integers only; the error names the element.
import { describe, expect, it } from 'vitest';
import { FieldError, putData } from '../../src/pva/fields.js';
import { scalar, scalarArray, structure, type ScalarType } from '../../src/pva/types.js';

const type = (t: ScalarType) => structure('epics:nt/NTScalarArray:1.0', { value: scalarArray(t) });
const put = (t: ScalarType, v: Parameters<typeof putData>[1]) => putData(type(t), v).value.value;

describe('putData of a typed array', () => {
  it('of the field type: the same array', () => {
    const a = new Float64Array([0.5, 1.5]);
    expect(put('double', a)).toBe(a);
    const b = new BigInt64Array([1n, -2n]);
    expect(put('long', b)).toBe(b);
  });

  it('of another numeric type: converted to the field type', () => {
    expect(put('int', new Float64Array([1, -2, 3]))).toEqual(new Int32Array([1, -2, 3]));
    expect(put('long', new Float64Array([1, 2 ** 40]))).toEqual(new BigInt64Array([1n, 2n ** 40n]));
    expect(put('double', new BigInt64Array([5n, -6n]))).toEqual(new Float64Array([5, -6]));
    expect(put('float', new Int16Array([7]))).toEqual(new Float32Array([7]));
  });

  it('a fraction or NaN to an integer field is refused, naming the element', () => {
    expect(() => put('int', new Float64Array([1, 2.5]))).toThrow(FieldError);
    expect(() => put('int', new Float64Array([1, 2.5]))).toThrow(/value\[1\] \(int\): not an integer/);
    expect(() => put('short', new Float32Array([Number.NaN]))).toThrow(/value\[0\] \(short\): not a number/);
  });

  it('a string or boolean field still takes the elements one by one', () => {
    expect(put('string', new Float64Array([1.5]))).toEqual(['1.5']);
    expect(put('boolean', new Uint8Array([0, 2]))).toEqual([false, true]);
  });
});

describe('putData of an array to a scalar field', () => {
  const one = (t: ScalarType, v: Parameters<typeof putData>[1]) =>
    putData(structure('epics:nt/NTScalar:1.0', { value: scalar(t) }), v).value.value;

  it('of one element: that element, as a CA put of count 1', () => {
    expect(one('double', new Float64Array([1.5]))).toBe(1.5);
    expect(one('int', [7])).toBe(7);
    expect(one('long', new BigInt64Array([-3n]))).toBe(-3n);
    expect(one('string', ['on'])).toBe('on');
  });

  it('of more or fewer elements: refused, saying so', () => {
    expect(() => one('double', new Float64Array([1, 2]))).toThrow(/value \(double\): an array of 2 elements to a scalar/);
    expect(() => one('int', [])).toThrow(FieldError);
  });
});
