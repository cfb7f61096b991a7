// The server workloads beside the crossing, end to end, with every server (each runner, the
// gateway and the built-in IOC): the servers' headroom (`bench headroom --servers`: each app posts
// the counters to two reference clients at once), the connect storm (`bench storm`: still counters, one client per
// protocol, c-libca and node-pva, asks for all of them at once; every channel answered with the
// counter's value) and the servers' load (`bench load --servers`: runners of the reference
// clients monitor the counters the app posts and its ramping PV; every update checked); the JSON
// fits the schema.
import { expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { SERVERS, SERVER_NAMES } from '../../src/servers/index.js';
import type { BenchResults } from '../../src/results/index.js';
import { schemaErrors } from '../helpers/schema.js';

it('every server, every protocol it serves: every channel of the storm answered, each value checked', async () => {
  const r = await runCli(['bench', 'storm', '--storm-channels', '500', '--storm-timeout', '20000', '--format', 'json', '--no-keep'], {
    timeoutMs: 240_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', results)).toEqual([]);
  const runs = results.storm!.runs;
  const expected = [...SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name}/${p}`)), 'ioc/CA', 'ioc/PVA'];
  expect(runs.map((x) => `${x.server}/${x.protocol}`).sort()).toEqual(expected.sort());
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

it("the servers' load: every server, every protocol it serves, holds a runner with every update checked", async () => {
  const r = await runCli(
    [
      'bench',
      'load',
      '--servers',
      [...SERVERS.map((s) => s.name), 'ioc'].join(','),
      '--steps',
      '2',
      '--step-seconds',
      '1',
      '--records',
      '50',
      '--format',
      'json',
      '--no-keep',
    ],
    { timeoutMs: 240_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', results)).toEqual([]);
  const steps = results.load!.steps;
  const expected = [...SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name} (${p})`)), 'ioc (CA)', 'ioc (PVA)'];
  expect(steps.map((x) => x.client).sort()).toEqual(expected.sort());
  for (const s of steps) {
    expect([s.client, s.held, s.limit?.text]).toEqual([s.client, true, undefined]);
    // Two runners, every counter update of the window received, none lost; the fairness runner's
    // ramping PV published by the app and received too.
    expect(
      s.runners.map((x) => [x.ok, x.missed]),
      s.client,
    ).toEqual([
      [true, 0],
      [true, 0],
    ]);
    expect(s.runners.find((x) => x.ramp)?.rampFraction, s.client).toBeGreaterThan(0.9);
  }
}, 240_000);

it("the servers' headroom: every server's app posts the counters to two reference clients at once, each update checked", async () => {
  const r = await runCli(
    [
      'bench',
      'headroom',
      '--servers',
      [...SERVER_NAMES, 'ioc'].join(','),
      '--headroom-steps',
      '100x5',
      '--headroom-seconds',
      '1',
      '--headroom-fanout',
      '2',
      '--no-keep',
      '--format',
      'json',
    ],
    { timeoutMs: 240_000 },
  );
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.code, r.stderr).toBe(0);
  const json = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', json)).toEqual([]);
  const runs = json.headroom!.runs;
  const expected = [...SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name} (${p}) x 2`)), 'ioc (CA) x 2', 'ioc (PVA) x 2'];
  expect(runs.map((x) => x.client).sort()).toEqual(expected.sort());
  for (const x of runs) {
    expect([x.client, x.held, x.failure?.text]).toEqual([x.client, true, undefined]);
    expect(x.run.client).toBe(x.server!.protocol === 'CA' ? 'c-libca' : 'c-pvxs');
    // Every update of every counter, to each of the two clients (the row's run is one of them).
    expect(x.run.check?.samples, x.client).toBe(100 * 5);
    // The app's own count of what it posted: the offered rate (over a second, a tick late or early
    // moves it by a fifth).
    expect(x.iocUpdatesS, x.client).toBeGreaterThan(375);
    expect(x.iocUpdatesS, x.client).toBeLessThan(625);
    expect(x.run.iocCpuPercent?.mean, x.client).toBeGreaterThanOrEqual(0);
  }
  const usage = await runCli(['bench', 'crossing', '--servers', 'ioc', '--no-keep'], { timeoutMs: 30_000 });
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/crossing: ioc \(the built-in IOC's records\) posts nothing on command/);
}, 300_000);
