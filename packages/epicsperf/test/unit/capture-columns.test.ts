// Column: the capture's growable buffer of numbers, held as parts that are never copied to grow.
import { describe, expect, it } from 'vitest';
import { Column } from '../../src/capture/columns.js';

const flat = (parts: ArrayLike<number>[]) => parts.flatMap((p) => Array.from(p));

describe('Column', () => {
  it('grows by opening parts, keeps every value in order and copies nothing already in', () => {
    const c = new Column(Float64Array, 4);
    c.pushAll([0, 1, 2]);
    const first = c.parts()[0]!;
    for (let i = 3; i < 40; i++) c.push(i);
    c.pushAll(new Float64Array([40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]));
    expect(c.length).toBe(51);
    expect(c.bytes).toBe(51 * 8);
    const parts = c.parts();
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.every((p) => p.length > 0)).toBe(true);
    expect(flat(parts)).toEqual(Array.from({ length: 51 }, (_, i) => i));
    // the first part is the same memory it was written into
    expect(parts[0]!.buffer).toBe(first.buffer);
  });

  it('detach hands the parts over and starts again on the memory given back', () => {
    const c = new Column(Int32Array, 2);
    c.pushAll([1, 2, 3, 4, 5]);
    const spare = new Int32Array(16);
    const out = c.detach(spare);
    expect(flat(out)).toEqual([1, 2, 3, 4, 5]);
    expect(c.length).toBe(0);
    expect(c.parts()).toEqual([]);
    c.pushAll([6, 7]);
    expect(c.parts()[0]!.buffer).toBe(spare.buffer);
    expect(flat(c.parts())).toEqual([6, 7]);
  });

  it('adopts parts without copying and lets go of them at clear()', () => {
    const c = new Column(Uint16Array);
    const a = new Uint16Array([1, 2]);
    const b = new Uint16Array([3]);
    c.adopt([a, new Uint16Array(0), b]);
    expect(c.length).toBe(3);
    const parts = c.parts();
    expect(parts.map((p) => p.buffer)).toEqual([a.buffer, b.buffer]);
    c.push(4);
    expect(flat(c.parts())).toEqual([1, 2, 3, 4]);
    c.clear();
    expect(c.length).toBe(0);
    c.push(9);
    expect(c.parts().some((p) => p.buffer === a.buffer || p.buffer === b.buffer)).toBe(false);
    expect(flat(c.parts())).toEqual([9]);
    // into a column that already holds values, adopted parts are copied
    c.adopt([a]);
    expect(flat(c.parts())).toEqual([9, 1, 2]);
    expect(c.parts().some((p) => p.buffer === a.buffer)).toBe(false);
  });
});
