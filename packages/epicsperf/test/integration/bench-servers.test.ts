// The server workloads beside the crossing and the load (bench-servers-load.test.ts), end to end:
// the servers' headroom (`bench headroom --servers`: an app posts the counters to two reference
// clients at once) and the connect storm (`bench storm`: still counters, one client per protocol,
// c-libca and node-pva, asks for all of them at once; every channel answered with the counter's
// value), each on this project's server (both protocols), the C++ reference and, for headroom,
// the gateway (the built-in IOC's own path, behind it); the JSON fits the schema.
import { expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { benchJson } from '../helpers/schema.js';

it('the storm: every channel answered, each value checked', async () => {
  const { results } = await benchJson(['storm', '--servers', 'node,pvxs', '--storm-channels', '500', '--storm-timeout', '20000'], 240_000);
  const runs = results.storm!.runs;
  expect(runs.map((x) => `${x.server}/${x.protocol}`).sort()).toEqual(['node/CA', 'node/PVA', 'pvxs/PVA']);
  for (const run of runs) {
    const what = `${run.server} over ${run.protocol}`;
    expect([run.ok, run.error], what).toEqual([true, undefined]);
    expect(run.answered, what).toBe(500);
    expect(run.wrong, what).toBe(0);
    expect(run.client, what).toBe(run.protocol === 'CA' ? 'c-libca' : 'node-pva');
    expect(run.version, what).toBeTruthy();
    expect(run.serverCpuS, what).toBeGreaterThanOrEqual(0);
    expect(run.serverPeakRssMb, what).toBeGreaterThan(1);
  }
}, 240_000);

it("the servers' headroom: an app posts the counters to two reference clients at once, each update checked", async () => {
  const { results: json } = await benchJson(
    ['headroom', '--servers', 'node,pvxs,pvagw', '--headroom-steps', '100x5', '--headroom-seconds', '1', '--headroom-fanout', '2'],
    240_000,
  );
  const runs = json.headroom!.runs;
  expect(runs.map((x) => x.client).sort()).toEqual(['node (CA) x 2', 'node (PVA) x 2', 'pvagw (PVA) x 2', 'pvxs (PVA) x 2']);
  for (const x of runs) {
    expect([x.client, x.held, x.failure?.text]).toEqual([x.client, true, undefined]);
    expect(x.run.client).toBe(x.server!.protocol === 'CA' ? 'c-libca' : 'c-pvxs');
    // Every update of every counter, to each of the two clients (the row's run is one of them).
    expect(x.run.check?.samples, x.client).toBe(100 * 5);
    // The app's own count of what it posted: the offered rate (over a second, on a loaded machine,
    // a tick late or early at either end of the window moves it by up to two fifths).
    expect(x.iocUpdatesS, x.client).toBeGreaterThan(250);
    expect(x.iocUpdatesS, x.client).toBeLessThan(750);
    expect(x.run.iocCpuPercent?.mean, x.client).toBeGreaterThanOrEqual(0);
  }
  const usage = await runCli(['bench', 'crossing', '--servers', 'ioc', '--no-keep'], { timeoutMs: 30_000 });
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/crossing: ioc \(the built-in IOC's records\) posts nothing on command/);
}, 300_000);
