// Snapshot workload ids (`bench --snapshots`): N names that exist + M missing, any N up to the
// built-in IOC's 100,000 counters, each id checked with a one-line reason when it is not one.
import { describe, expect, it } from 'vitest';
import { parseSnapshotWorkload, SNAPSHOT_WORKLOADS, snapshotNames } from '../../src/workloads/snapshot.js';
import { UsageError } from '../../src/errors.js';

describe('snapshot workload ids', () => {
  it('reads N and N+M, the listed ids and others, in their plain form', () => {
    expect(parseSnapshotWorkload('100000+95')).toEqual({ id: '100000+95', connected: 100_000, missing: 95 });
    expect(parseSnapshotWorkload('250+7')).toEqual({ id: '250+7', connected: 250, missing: 7 });
    expect(parseSnapshotWorkload('97')).toEqual({ id: '97', connected: 97, missing: 0 });
    expect(parseSnapshotWorkload(' 97+0 ')).toEqual({ id: '97', connected: 97, missing: 0 });
    expect(parseSnapshotWorkload('010+05')).toEqual({ id: '10+5', connected: 10, missing: 5 });
    for (const w of SNAPSHOT_WORKLOADS) expect(parseSnapshotWorkload(w.id)).toEqual(w);
  });

  it('refuses anything else with one line saying what an id is', () => {
    for (const bad of ['', '0', '0+5', '100001', '100000+10001', '1e5', '97-4', '97+', '+4', '97+4+1', 'abc', '1000000+95']) {
      let err: unknown;
      try {
        parseSnapshotWorkload(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(
        `snapshot workload "${bad}" is not N or N+M (N names that exist, 1-100000; M missing, 0-10000), e.g. 1000+95 or 100000+95`,
      );
    }
  });

  it('names every counter once and spreads the missing names through the list', () => {
    const names = snapshotNames(parseSnapshotWorkload('100000+95'));
    expect(names).toHaveLength(100_095);
    const counters = names.filter((n) => n.startsWith('TEST:CALC'));
    expect(new Set(counters).size).toBe(100_000);
    expect(counters.at(-1)).toBe('TEST:CALC100000');
    const at = names.flatMap((n, i) => (n.startsWith('TEST:MISSING') ? [i] : []));
    expect(at).toHaveLength(95);
    // evenly: about 1,050 names apart, none at either end
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThan(1000);
    expect(at[0]).toBeGreaterThan(1000);
    expect(names.length - at.at(-1)!).toBeGreaterThan(1000);
  });
});
