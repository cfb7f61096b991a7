// The servers' load end to end (`bench load --servers`), with every server runner and the gateway:
// runners of the reference clients monitor the counters the app posts and its ramping PV, every
// update checked, so every runner's counters, counts and ramp are covered; the JSON fits the
// schema.
import { expect, it } from 'vitest';
import { SERVERS, SERVER_NAMES } from '../../src/servers/index.js';
import { benchJson } from '../helpers/schema.js';

/** The sample checker's findings on an update of core-pva's with no alarm and no time. */
const FINDING = String.raw`XP:CALC\d+: (severity 0 at value \d+, expected 1|timestamp 1970-\S+ outside the run)`;
const CORE_PVA_FIRST_UPDATE = new RegExp(`^sample check failed: ${FINDING}(; ${FINDING})*$`);

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
    // core-pva's server sends a subscription's tick without its alarm and time when the first
    // update was still waiting to be sent (docs/runners.md, "corepva server"), as a loaded
    // machine makes it: its row may fail on that finding, and on nothing else.
    const corePvaFirstUpdate = s.client === 'corepva (PVA)' && CORE_PVA_FIRST_UPDATE.test(runner!.error ?? '');
    if (!corePvaFirstUpdate) expect([s.client, runner!.ok, runner!.error]).toEqual([s.client, true, undefined]);
    // Every update received checked. The step holds, or loses under 1% of the window's updates:
    // on two cores shared with the suite's other files a server's event queue can go unserved
    // for a moment, and a CA server then sends a PV's latest value rather than each (RSRV's flow
    // control), a gap the runner counts. A step lost to latency or CPU fails here.
    const missed = runner!.missed ?? 0;
    expect(missed / (missed + runner!.samples!), s.client).toBeLessThan(0.01);
    if (!s.held && !corePvaFirstUpdate) expect(s.limit?.text, s.client).toMatch(/^lost \d+ updates \(0\.\d+%\)/);
    // The ramping PV published by the app and received too (the step's one runner is its
    // fairness runner).
    expect(runner!.rampFraction, s.client).toBeGreaterThan(0.9);
  }
}, 240_000);
