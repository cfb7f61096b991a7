// The crossing workload's arithmetic: each post's update matched by its number k to the server's
// post time; the update at subscription left out; a post missing, twice, out of order or not
// intact is the point's error; the fit through the sizes.
import { describe, expect, it } from 'vitest';
import { crossingPoint, payloads } from '../../src/bench/crossing.js';
import type { Sample } from '../../src/bench/samples.js';

const T0 = 1_800_000_000;
const posted = new Map([1, 2, 3].map((k) => [k, T0 + k] as [number, number]));
/** A client's sample of update `value`, received `ms` after post `value`. */
const got = (value: number, ms: number, status = 0): Sample => ({
  pv: 0,
  severity: 0,
  status,
  value,
  iocTime: 0,
  recvTime: T0 + value + ms / 1000,
});

describe('crossingPoint', () => {
  it('each post once, in order: its receive time less its post time; the value at subscription left out', () => {
    // The first sample is the value at subscription, whatever an earlier run left (3 here).
    const p = crossingPoint('int32', 1000, [got(3, -500), got(1, 0.5), got(2, 0.25), got(3, 1)], posted, 3);
    expect(p.ok).toBe(true);
    expect(p.updates).toBe(3);
    expect(p.bytes).toBe(4000);
    expect(p.minMs).toBeCloseTo(0.25, 3);
    expect(p.p50Ms).toBeCloseTo(0.5, 3);
    expect(p.maxMs).toBeCloseTo(1, 3);
  });

  it('a post missing, out of order, not of a post or not intact is the error', () => {
    expect(crossingPoint('double', 1, [got(0, 0), got(1, 1), got(3, 1)], posted, 3).error).toBe('2 of 3 posts received');
    expect(crossingPoint('double', 1, [got(0, 0), got(2, 1), got(1, 1), got(3, 1)], posted, 3).error).toBe('1 updates out of order');
    expect(crossingPoint('double', 1, [got(0, 0), got(1, 1), got(9, 1), got(2, 1), got(3, 1)], posted, 3).error).toMatch(/not of a post/);
    expect(crossingPoint('int32', 12, [got(0, 0), got(1, 1), got(2, 1, 2), got(3, 1)], posted, 3).ok).toBe(false);
    expect(crossingPoint('double', 1, [got(0, 0), got(1, 1), got(2, 1), got(3, 1)], new Map([[1, T0 + 1]]), 3).ok).toBe(false);
  });

  it('the payloads in the order measured, named as the server runners serve them', () => {
    expect(payloads({ servers: [], int32Sizes: [12, 250_000], byteSizes: [1000], count: 1, periodMs: 1 }).map((p) => p.name)).toEqual([
      'XP:CROSS:DOUBLE',
      'XP:CROSS:INT32:12',
      'XP:CROSS:INT32:250000',
      'XP:CROSS:BYTES:1000',
    ]);
  });
});
