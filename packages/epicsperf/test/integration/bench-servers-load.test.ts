// The servers' load end to end (`bench load --servers`), with every server runner and the gateway:
// runners of the reference clients monitor the counters the app posts and its ramping PV, every
// update checked, so every runner's counters, counts and ramp are covered; the JSON fits the
// schema.
import { expect, it } from 'vitest';
import { SERVERS, SERVER_NAMES } from '../../src/servers/index.js';
import { benchJson } from '../helpers/schema.js';

/** The sample checker's findings on core-pva's merged updates (docs/runners.md, "corepva server"): a
 *  tick merged into a subscription's first update still waiting to be sent (no alarm, no seconds),
 *  and a tick's changed fields put in place of those of an update still waiting (the seconds of its
 *  timestamp not sent when they changed in the update it replaced). */
const FINDING = String.raw`XP:CALC\d+: (severity 0 at value \d+, expected 1|timestamp 1970-\S+ outside the run|timestamp did not increase after value \d+)`;
const CORE_PVA_MERGED = new RegExp(`^sample check failed: ${FINDING}(; ${FINDING})*$`);

it("the servers' load: every server, every protocol it serves, holds a runner with every update checked", async () => {
  const { results } = await benchJson(
    ['load', '--servers', SERVER_NAMES.join(','), '--steps', '1', '--step-seconds', '1', '--records', '50'],
    240_000,
  );
  const steps = results.load!.steps;
  const expected = SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name} (${p})`));
  expect(steps.map((x) => x.client).sort()).toEqual(expected.sort());
  for (const s of steps) {
    const [runner] = s.runners;
    expect(s.runners, s.client).toHaveLength(1);
    if (s.client === 'corepva (PVA)') {
      // core-pva's server has no queue per subscription: a tick made while a subscription's last
      // update still waits for its connection's sender thread is merged into it. On two cores
      // shared with the suite's other files and first builds its sender threads fall a tick behind
      // now and then, where every other server's queue holds (docs/runners.md, "corepva server").
      // Its row may lose updates, and fail on the merges' findings, and on nothing else.
      if (runner!.error !== undefined) expect(runner!.error, s.client).toMatch(CORE_PVA_MERGED);
      if (!s.held) expect(s.limit?.text, s.client).toMatch(/^(lost \d+ updates \(\d+\.\d+%\)|1 of 1 runners failed)/);
      expect(runner!.samples, s.client).toBeGreaterThan(0);
      expect(runner!.rampFraction, s.client).toBeDefined();
      continue;
    }
    expect([s.client, runner!.ok, runner!.error]).toEqual([s.client, true, undefined]);
    // Every update received checked. The step holds, or loses under 1% of the window's updates:
    // on two cores shared with the suite's other files a server's event queue can go unserved
    // for a moment, and a CA server then sends a PV's latest value rather than each (RSRV's flow
    // control), a gap the runner counts. A step lost to latency or CPU fails here.
    const missed = runner!.missed ?? 0;
    expect(missed / (missed + runner!.samples!), s.client).toBeLessThan(0.01);
    if (!s.held) expect(s.limit?.text, s.client).toMatch(/^lost \d+ updates \(0\.\d+%\)/);
    // The ramping PV published by the app and received too (the step's one runner is its
    // fairness runner).
    expect(runner!.rampFraction, s.client).toBeGreaterThan(0.9);
  }
}, 240_000);
