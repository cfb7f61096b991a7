// The load workload against the built-in IOC: node runners at 1 and 2 per host, 50 counters x 10 Hz,
// 3 s per step, with real figures (the aggregate rate, no loss, each host's and the IOC's CPU,
// fairness between steady counters and PREFIX:RAMP at its step's rate); a runner killed half-way
// is a row that says why while the others are measured; `bench load` and its bad input.
import { beforeAll, describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../src/pyenv/index.js';
import { findClient } from '../../src/clients/index.js';
import { doctor } from '../../src/doctor.js';
import { runLoad } from '../../src/bench/load.js';
import { LocalHost } from '../../src/hosts/local-host.js';
import type { Host, RunnerRequest } from '../../src/hosts/host.js';
import type { BenchResults } from '../../src/results/index.js';
import { schemaErrors } from '../helpers/schema.js';
import { runCli } from 'epicsperf-testkit/cli';

const node = findClient('node')!;

describe('load against the built-in IOC', () => {
  let python: string;
  beforeAll(async () => {
    python = await ensurePythonEnv();
  });

  it('node at 1 and 2 runners: every update of every runner, CPU measured, fairness figures', async () => {
    const progress: string[] = [];
    const r = await runLoad({
      clients: [node],
      hosts: [new LocalHost(python)],
      steps: [1, 2],
      records: 50,
      rate: 10,
      stepSeconds: 3,
      hostCores: { local: 2 },
      onProgress: (t) => progress.push(t),
    });
    expect(r.steps.map((s) => [s.runnersPerHost, s.totalClients, s.held])).toEqual([
      [1, 1, true],
      [2, 2, true],
    ]);
    for (const s of r.steps) {
      const what = `${s.runnersPerHost} runners`;
      expect(s.limit, what).toBeUndefined();
      expect(s.missed, what).toBe(0);
      // every runner receives every counter at 10 Hz: N x 50 x 10 updates/s in all
      expect(s.updatesS, what).toBeGreaterThan(0.9 * s.totalClients * 500);
      expect(s.updatesS, what).toBeLessThan(1.1 * s.totalClients * 500);
      expect(s.offeredUpdatesS).toBe(s.totalClients * 500);
      expect(s.latencyMs!.p50).toBeGreaterThan(0);
      expect(s.latencyMs!.p99).toBeGreaterThanOrEqual(s.latencyMs!.p50);
      // each host's CPU (its load runners added up) and the IOC's, from outside
      expect(s.hosts).toHaveLength(1);
      expect(s.hosts[0]).toMatchObject({ host: 'local', runners: s.runnersPerHost, failed: 0, cores: 2 });
      // (a few ms of CPU a second per runner at this load: /proc counts in 10 ms ticks, so one may read 0)
      expect(s.hosts[0]!.cpuPercent).toBeGreaterThanOrEqual(0);
      expect(s.iocCpuPercent).toBeGreaterThan(0);
      // the IOC's own count of what it published: 50 counters x 10 Hz
      expect(s.iocUpdatesS).toBeGreaterThan(400);
      expect(s.iocUpdatesS).toBeLessThan(600);
      // the first runner of the host is its fairness runner: it watches PREFIX:RAMP after the counters
      expect(s.runners.map((x) => [x.index, x.ramp ?? false])).toEqual(
        Array.from({ length: s.runnersPerHost }, (_, k) => [k + 1, k === 0]),
      );
      for (const x of s.runners) {
        expect(x.ok, x.error).toBe(true);
        expect(x.version).toBe('0.1.0');
        expect(x.connectMs).toBeGreaterThan(0);
        expect(x.cpuPercent).toBeGreaterThanOrEqual(0);
      }
      const f = s.fairness!;
      expect(f.rampRateHz).toBe(100 * s.runnersPerHost);
      expect(f.rampPublishedHz).toBeGreaterThan(0.9 * f.rampRateHz);
      expect(f.rampPublishedHz).toBeLessThan(1.1 * f.rampRateHz);
      expect(f.steadyFraction).toBe(1);
      expect(f.rampFraction).toBeGreaterThan(0.9);
      expect(f.rampFraction).toBeLessThanOrEqual(1);
      // PREFIX:RAMP ran over the window only (3 s, within the fairness runner's room)
      expect(f.rampSeconds).toBeGreaterThan(2.5);
      expect(f.rampSeconds).toBeLessThan(3.5);
      expect(f.ratio).toBeCloseTo(f.rampFraction / f.steadyFraction, 9);
    }
    expect(r.steps.flatMap((s) => s.runners).reduce((a, x) => a + (x.cpuPercent ?? 0), 0)).toBeGreaterThan(0);
    expect(r.clients).toEqual([
      expect.objectContaining({ client: 'node', served: 2, bestRunnersPerHost: 2, limit: expect.objectContaining({ kind: 'none' }) }),
    ]);
    expect(r.hosts).toEqual([expect.objectContaining({ name: 'local', cores: 2 })]);
    expect(progress).toContain('collecting');
    const bench = {
      schema: 'epicsperf/bench@2',
      startedAt: new Date().toISOString(),
      host: 'h',
      // The environment a bench run records (bench: doctor()'s report).
      environment: await doctor(),
      options: {
        workloads: { snapshot: [], monitor: false, load: r.workload },
        repeat: 1,
        timeoutMs: 1,
        records: 50,
        samples: 1,
        rate: 10,
        clients: ['node'],
        scheduling: '',
        profile: 'custom',
      },
      unavailable: [],
      snapshot: [],
      load: r,
    };
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(bench)))).toEqual([]);
  }, 60_000);

  it('a runner killed half-way is a row that says why; the others are measured, and the ramp stops there', async () => {
    const local = new LocalHost(python);
    let started = 0;
    // This host, except that its second load runner is killed 1.5 s after it starts.
    const host: Host = {
      name: local.name,
      address: local.address,
      prepare: (c, r) => local.prepare(c, r),
      startIoc: (o) => local.startIoc(o),
      doctor: () => local.doctor(),
      close: () => local.close(),
      startRunner: (req: RunnerRequest) => {
        const runner = local.startRunner(req);
        if (++started === 2) setTimeout(() => void runner.kill(), 1500);
        return runner;
      },
    };
    const r = await runLoad({
      clients: [node],
      hosts: [host],
      steps: [2, 3],
      records: 50,
      rate: 10,
      stepSeconds: 3,
      hostCores: { local: 2 },
    });
    expect(r.steps).toHaveLength(1);
    const s = r.steps[0]!;
    expect(s.held).toBe(false);
    const dead = s.runners.find((x) => x.index === 2)!;
    expect(dead.ok).toBe(false);
    expect(dead.error).toMatch(/the runner exited \(SIGKILL\)/);
    expect(s.runners.filter((x) => x.ok).map((x) => x.index)).toEqual([1]);
    expect(s.runners[0]!.updatesS).toBeGreaterThan(450);
    expect(s.hosts[0]).toMatchObject({ runners: 2, failed: 1 });
    expect(s.limit).toEqual({
      kind: 'failed',
      text: expect.stringMatching(/^1 of 2 runners failed \(local #2: the runner exited \(SIGKILL\)/),
    });
    expect(r.clients[0]).toMatchObject({ served: 0, limit: { kind: 'failed', atRunnersPerHost: 2 } });
  }, 60_000);
});

it('the command line: `bench load` with node on two small steps, and its bad input', async () => {
  const r = await runCli(
    ['bench', 'load', '--clients', 'node', '--steps', '1,2', '--records', '20', '--step-seconds', '2', '--no-keep', '--format', 'json'],
    { timeoutMs: 60_000 },
  );
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.code).toBe(0);
  const json = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', json)).toEqual([]);
  expect(json.options.profile).toBe('custom');
  expect(json.load!.steps.map((x) => [x.client, x.totalClients, x.held])).toEqual([
    ['node', 1, true],
    ['node', 2, true],
  ]);
  expect(json.load!.workload).toMatchObject({ steps: [1, 2], records: 20, rateHz: 10, seconds: 2 });
  expect(r.stderr).toMatch(/\[2\/2\] load 2 runners · node · run 1\/1: held: 2 clients, /);
  for (const [args, message] of [
    [['bench', 'load', '--steps', '4,2'], /each step must run more runners than the one before \(2 after 4\)/],
    [['bench', 'load', '--steps', '1,two'], /"two" is not a number of runners from 1 to 1000/],
    [['bench', 'load', '--step-seconds', '0'], /--step-seconds/],
    [['bench', 'headroom', '--steps', '1,2'], /--steps is an option of bench load, not of bench headroom/],
    [['bench', 'snapshot', '--records', '5'], /--records is an option of bench monitor and bench load, not of bench snapshot/],
  ] as const) {
    const bad = await runCli([...args], { timeoutMs: 30_000 });
    expect(bad.code, args.join(' ')).toBe(2);
    expect(bad.stderr).toMatch(message);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  }
}, 90_000);
