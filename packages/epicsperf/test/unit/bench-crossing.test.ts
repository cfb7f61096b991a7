// The crossing workload's arithmetic: each post's update matched by its number k to the server's
// post time; the update at subscription left out; a post merged into a later update counted and
// said; the last post missing, a post twice, out of order or not intact is the point's error.
import { describe, expect, it } from 'vitest';
import { crossingPoint, payloads } from '../../src/bench/crossing.js';
import { crossingTables } from '../../src/report/crossing.js';
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

  it('a post missing before one that arrived was merged into it: counted, not an error', () => {
    const p = crossingPoint('double', 1, [got(0, 0), got(1, 1), got(3, 1)], posted, 3);
    expect([p.ok, p.updates, p.merged, p.error]).toEqual([true, 2, 1, undefined]);
    expect(crossingPoint('double', 1, [got(0, 0), got(3, 1)], posted, 3).merged).toBe(2);
    expect(crossingPoint('double', 1, [got(0, 0), got(1, 1), got(2, 1), got(3, 1)], posted, 3).merged).toBeUndefined();
    const run = { server: 'softioc', protocol: 'CA' as const, client: 'c-libca', ok: true, points: [p] };
    expect(crossingTables([run])).toMatch(/softioc .* 2 .* c-libca +1 post merged into a later update/);
  });

  it('the last post missing, out of order, not of a post or not intact is the error', () => {
    expect(crossingPoint('double', 1, [got(0, 0), got(1, 1), got(2, 1)], posted, 3).error).toBe(
      '2 of 3 posts received; not post 3; received 0, 1, 2',
    );
    expect(crossingPoint('double', 1, [got(0, 0), got(2, 1)], posted, 3).error).toBe('1 of 3 posts received; not post 3; received 0, 2');
    expect(crossingPoint('double', 1, [got(0, 0)], posted, 3).error).toBe('0 of 3 posts received; not posts 1, 2, 3; received 0');
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
