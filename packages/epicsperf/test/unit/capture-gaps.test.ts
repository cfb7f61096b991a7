// GapDetector: gap records for counters (k, k+1, ...) and update-numbered arrays.
import { describe, expect, it } from 'vitest';
import { GapDetector } from '../../src/capture/gaps.js';

function run(values: (number | number[])[], previous?: number) {
  const d = new GapDetector(previous);
  const gaps = values.map((v, i) => d.observe(i, v)).filter((g) => g !== undefined);
  return { d, gaps };
}

describe('GapDetector', () => {
  it('finds nothing in a counter that steps by 1', () => {
    const { d, gaps } = run([5, 6, 7, 8]);
    expect(gaps).toEqual([]);
    expect(d).toMatchObject({ lost: 0, gaps: 0, mismatched: 0 });
  });

  it('records each gap with its row, the values around it and the updates lost', () => {
    const { d, gaps } = run([1, 2, 5, 6, 10]);
    expect(gaps).toEqual([
      { index: 2, before: 2, after: 5, lost: 2 },
      { index: 4, before: 6, after: 10, lost: 3 },
    ]);
    expect(d.lost).toBe(5);
    expect(d.gaps).toBe(2);
  });

  it('records a repeat or a step back (IOC restart) with lost <= 0, not counted as lost', () => {
    const { d, gaps } = run([7, 8, 8, 1, 2]);
    expect(gaps).toEqual([
      { index: 2, before: 8, after: 8, lost: -1 },
      { index: 3, before: 8, after: 1, lost: -8 },
    ]);
    expect(d.lost).toBe(0);
    expect(d.gaps).toBe(2);
  });

  it('with the value before the first update, finds a gap at row 0', () => {
    expect(run([4, 5], 1).gaps).toEqual([{ index: 0, before: 1, after: 4, lost: 2 }]);
    expect(run([2, 3], 1).gaps).toEqual([]);
  });

  it('reads an array by its update number and counts elements that disagree', () => {
    const { d, gaps } = run([[3, 3, 3], new Float64Array([4, 4, 4]) as unknown as number[], [6, 6, 9], []]);
    expect(gaps).toEqual([{ index: 2, before: 4, after: 6, lost: 1 }]);
    expect(d.mismatched).toBe(1);
  });

  it('counts disagreeing elements of typed arrays of every width, NaN as disagreeing and -0 as 0', () => {
    const typed = (v: ArrayLike<number>[]) => run(v as unknown as number[]).d.mismatched;
    expect(typed([new Float64Array([6, 6, 9, 6, 7])])).toBe(2);
    expect(typed([new Int16Array(1000).fill(-3), new Uint8Array(1000).fill(255)])).toBe(0);
    expect(typed([new Int32Array([1, 1, 1, 2]), new Float32Array([5, 5.5])])).toBe(2);
    expect(typed([new Float64Array([Number.NaN, Number.NaN]), new Float64Array([1, Number.NaN])])).toBe(2);
    expect(typed([new Float64Array([0, -0, 0])])).toBe(0);
    // a view into a larger buffer is compared over its own elements only
    expect(typed([new Float64Array([9, 4, 4, 4, 9]).subarray(1, 4)])).toBe(0);
  });
});
