// The reconnection soak, short: 10 counters monitored over CA and 10 over PVA while the IOC is
// stopped and started again (a snapshot taken during the outage), then frozen past the echo
// timeout and thawed, four times each. Every monitor's events keep their order, no error event,
// nothing thrown, no descriptor left behind. (The heap is checked by benchmarks/soak.mjs, under
// --expose-gc.)
import { describe, expect, it } from 'vitest';
import { runSoak } from 'epicsperf-testkit/soak';

describe('reconnection soak (short)', () => {
  it('monitors over both protocols come back, in order, after restarts and freezes, leaving nothing behind', async () => {
    const r = await runSoak({ cycles: 4, records: 10, rate: 10, connTimeout: 1, warmup: 1 });
    expect(r.aborted).toBeUndefined();
    expect(r.thrown).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.errorEvents).toBe(0);
    expect(r.cycles).toHaveLength(4);
    expect(r.monitors).toEqual({ ca: 10, pva: 10 });
    for (const c of r.cycles) {
      // During the outage every name failed (20 monitored and one missing per protocol).
      expect(c.restart.snapshotNames).toBe(22);
      expect(c.restart.snapshotFailed).toBe(22);
      // One circuit per protocol: the old ones are gone.
      expect(c.circuits).toEqual([1, 1]);
    }
    expect(r.snapshotSuccesses).toBe(0);
    // Descriptors: after the first cycle (which may open what is opened once), no growth.
    const fds = r.cycles.map((c) => c.fds);
    expect(Math.max(...fds.slice(1))).toBeLessThanOrEqual(fds[1]!);
  }, 90_000);
});
