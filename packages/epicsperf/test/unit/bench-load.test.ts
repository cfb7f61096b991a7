// The load workload's pure part on fixtures: one runner's samples (rate, loss, latency, fairness),
// the stopping rule and what limited a step, clients served; the report (text, HTML chart), the
// schema, and compare across two runs with a load section.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { analyseRunner, judgeLoadStep, loadClient, pooledLatency, type JudgeOptions } from '../../src/bench/load-judge.js';
import { latencyGrowthMs, loadWorkload, rampRate } from '../../src/bench/load.js';
import type { Sample } from '../../src/bench/samples.js';
import { BENCH_FORMAT, type BenchResults, type LoadResults, type LoadRunner, type LoadStepResult } from '../../src/results/index.js';
import { benchHtml, compareRuns, ran, renderBench, workloadFigures } from '../../src/workloads/index.js';
import { parseLoadSteps } from '../../src/workloads/load.js';
import { schemaErrors } from '../helpers/schema.js';

const T0 = 1_800_000_000;

/** `pvs` counters at `hz` for `seconds`, received `latencyMs` after their timestamps; `drop`
 *  leaves an update out. */
function counters(pvs: number, hz: number, seconds: number, latencyMs = 2, drop?: (pv: number, i: number) => boolean, pv0 = 0): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < hz * seconds; i++) {
    for (let pv = 0; pv < pvs; pv++) {
      if (drop?.(pv, i)) continue;
      const iocTime = T0 + i / hz;
      out.push({ pv: pv0 + pv, severity: 1, status: 4, value: 100 + i, iocTime, recvTime: iocTime + latencyMs / 1000 });
    }
  }
  return out;
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `TEST:CALC${i + 1}`);

describe('one runner of the load workload', () => {
  it('counts each counter at its own rate, the values it missed and its latency', () => {
    const a = analyseRunner(counters(50, 10, 3, 4), { names: names(50), rate: 10, startedAt: T0 });
    expect(a.problem).toBeUndefined();
    expect(a.figures.samples).toBe(1500);
    expect(a.figures.updatesS).toBeCloseTo(500, 3);
    expect(a.figures.missed).toBe(0);
    expect(a.figures.latencyMs!.p99).toBeCloseTo(4, 3);
    // without a window, every update after each PV's first has a latency, for pooling across runners
    expect(a.latencies.length).toBe(1450);
    const lossy = analyseRunner(
      counters(50, 10, 3, 4, (pv, i) => pv < 5 && i === 10),
      { names: names(50), rate: 10, startedAt: T0 },
    );
    expect(lossy.figures).toMatchObject({ missed: 5, gaps: 5 });
    // gaps are the step's loss, not a failed check
    expect(lossy.problem).toBeUndefined();
  });

  it('rate, latency and fairness count the window (the IOC clock) only; loss counts from the subscription', () => {
    // the first second is the other runners' connecting: 500 ms late, with one update lost
    const samples = counters(50, 10, 3, 2, (pv, i) => pv === 0 && i === 3).map((s) =>
      s.iocTime < T0 + 1 ? { ...s, recvTime: s.iocTime + 0.5 } : s,
    );
    const all = analyseRunner(samples, { names: names(50), rate: 10, startedAt: T0 });
    expect(all.figures.latencyMs!.p99).toBeCloseTo(500, 1);
    const a = analyseRunner(samples, { names: names(50), rate: 10, startedAt: T0, window: [T0 + 1, T0 + 3] });
    expect(a.figures.latencyMs!.p99).toBeCloseTo(2, 3);
    expect(a.latencies.length).toBe(50 * 20);
    expect(a.figures.updatesS).toBeCloseTo(500, 3);
    expect(a.figures.missed).toBe(1);
  });

  it('a value going backwards or a PV silent after its first update is a failed check', () => {
    const back = counters(3, 10, 2).map((s, k) => (k === 20 ? { ...s, value: 0 } : s));
    expect(analyseRunner(back, { names: names(3), rate: 10, startedAt: T0 }).problem).toMatch(/^sample check failed: TEST:CALC\d/);
    const silent = counters(3, 10, 2, 2, (pv, i) => pv === 1 && i > 0);
    expect(analyseRunner(silent, { names: names(3), rate: 10, startedAt: T0 }).problem).toMatch(/TEST:CALC2: 1 of 2 samples/);
  });

  it('a fairness runner: the steady counters and the ramping PV delivered apart', () => {
    // 10 steady counters at 10 Hz, PREFIX:RAMP at 200 Hz of which every fourth update is merged away
    const ramp: Sample[] = [];
    for (let k = 0; k < 600; k++) {
      if (k % 4 === 3) continue;
      const iocTime = T0 + k / 200;
      ramp.push({ pv: 10, severity: 1, status: 4, value: 5000 + k, iocTime, recvTime: iocTime + 0.001 });
    }
    const a = analyseRunner([...counters(10, 10, 3), ...ramp], {
      names: [...names(10), 'TEST:RAMP'],
      rate: 10,
      startedAt: T0,
      rampIndex: 10,
    });
    expect(a.problem).toBeUndefined();
    expect(a.figures.steadyFraction).toBe(1);
    expect(a.figures.rampFraction).toBeCloseTo(448 / 597, 6);
    expect(a.figures.rampPublishedHz).toBeCloseTo(200, 3);
    // the ramp's gaps are the fairness figure, not loss; the rate counts the steady counters only
    expect(a.figures.missed).toBe(0);
    expect(a.figures.updatesS).toBeCloseTo(100, 3);
    // none of the ramp's updates of the window received, though the IOC counted 800 of them: 0
    const starved = analyseRunner(counters(10, 10, 3), {
      names: [...names(10), 'TEST:RAMP'],
      rate: 10,
      startedAt: T0,
      rampIndex: 10,
      window: [T0 + 1, T0 + 3],
      rampPublished: 800,
    });
    expect(starved.figures).toMatchObject({ steadyFraction: 1, rampFraction: 0 });
  });

  it('latency pooled over runners', () => {
    expect(pooledLatency([Float64Array.from([1, 2, 3]), Float64Array.from([100])])).toEqual({ p50: 2, p99: 100 });
    expect(pooledLatency([])).toBeUndefined();
  });
});

const runner = (o: Partial<LoadRunner> = {}): LoadRunner => ({
  host: 'local',
  index: 1,
  ok: true,
  cpuPercent: 10,
  updatesS: 10_000,
  missed: 0,
  ...o,
});

/** A step of `n` runners on one 2-core host, as the orchestrator composes it. */
function step(client: string, n: number, o: Partial<LoadStepResult> = {}): Omit<LoadStepResult, 'held' | 'limit'> {
  return {
    client,
    runnersPerHost: n,
    totalClients: n,
    offeredUpdatesS: n * 10_000,
    updatesS: n * 10_000,
    missed: 0,
    lossFraction: 0,
    latencyMs: { p50: 1, p99: 10 },
    hosts: [{ host: 'local', cpuPercent: 10 * n, runners: n, failed: 0, cores: 2 }],
    iocCpuPercent: 20,
    iocUpdatesS: 10_000,
    fairness: { rampRateHz: 100 * n, rampPublishedHz: 100 * n, rampSeconds: 5, steadyFraction: 1, rampFraction: 1, ratio: 1 },
    runners: Array.from({ length: n }, (_, k) =>
      runner({ index: k + 1, ...(k === 0 && { ramp: true, steadyFraction: 1, rampFraction: 1, rampPublishedHz: 100 * n }) }),
    ),
    windowS: 5,
    ...o,
  };
}

const judgeOpts = (first?: LoadStepResult): JudgeOptions => ({
  first,
  latencyGrowthMs: 100,
  iocOfferedUpdatesS: 10_000,
  iocHost: 'local',
  cores: { local: 2 },
});
const judged = (s: Omit<LoadStepResult, 'held' | 'limit'>, first?: LoadStepResult): LoadStepResult => ({
  ...s,
  ...judgeLoadStep(s, judgeOpts(first)),
});

describe('the stopping rule', () => {
  const first = judged(step('node', 1));

  it('a step holds with no loss, p99 within the threshold of the first step, no runner failed', () => {
    expect(first.held).toBe(true);
    expect(judged(step('node', 2, { latencyMs: { p50: 1, p99: 109 } }), first).held).toBe(true);
  });

  it('loss, grown latency and a failed runner each stop it, saying which', () => {
    const lost = judged(step('node', 2, { missed: 120, lossFraction: 0.0012 }), first);
    expect(lost).toMatchObject({
      held: false,
      limit: { kind: 'lost', text: 'lost 120 updates (0.12%): no CPU saturated (local: clients 20%, IOC 20% of 200%)' },
    });
    const slow = judged(step('node', 2, { latencyMs: { p50: 30, p99: 111 } }), first);
    expect(slow.limit).toEqual({
      kind: 'latency',
      text: "p99 latency 111 ms, more than 100 ms above the first step's 10.0 ms: no CPU saturated (local: clients 20%, IOC 20% of 200%)",
    });
    const failed = judged(
      step('node', 2, {
        runners: [runner(), runner({ index: 2, ok: false, error: 'the runner exited (code 1) before all PVs connected: boom' })],
      }),
      first,
    );
    expect(failed.limit).toEqual({
      kind: 'failed',
      text: '1 of 2 runners failed (local #2: the runner exited (code 1) before all PVs connected: boom)',
    });
  });

  it('names the resource that was saturated: the IOC, the host (its larger user), or a runner', () => {
    const loss = { missed: 10, lossFraction: 0.001 };
    expect(judged(step('node', 4, { ...loss, iocUpdatesS: 8000 }), first).limit).toEqual({
      kind: 'ioc-cpu',
      text: 'lost 10 updates (0.10%): the IOC published 8,000 of 10,000 counter updates/s (CPU 20%)',
    });
    const host = (clients: number, ioc: number) =>
      judged(
        step('node', 4, { ...loss, iocCpuPercent: ioc, hosts: [{ host: 'local', cpuPercent: clients, runners: 4, failed: 0, cores: 2 }] }),
        first,
      ).limit;
    expect(host(130, 60)).toEqual({
      kind: 'client-cpu',
      text: "lost 10 updates (0.10%): host local's CPU saturated (clients 130%, IOC 60% of 200%)",
    });
    expect(host(60, 130)?.kind).toBe('ioc-cpu');
    expect(host(60, 60)?.kind).toBe('lost');
    const busy = judged(step('node', 2, { ...loss, runners: [runner({ cpuPercent: 97 }), runner({ index: 2 })] }), first);
    expect(busy.limit).toEqual({ kind: 'client-cpu', text: 'lost 10 updates (0.10%): 1 runner at a full core (up to 97%)' });
  });

  it('clients served: the load runners of the highest step held, and what stopped the climb', () => {
    const steps = [first, judged(step('node', 2), first), judged(step('node', 4, { missed: 5, lossFraction: 0.0001 }), first)];
    expect(loadClient('node', steps, 5)).toEqual({
      client: 'node',
      served: 2,
      bestRunnersPerHost: 2,
      bestUpdatesS: 20_000,
      limit: { kind: 'lost', text: 'lost 5 updates (0.01%): no CPU saturated (local: clients 40%, IOC 20% of 200%)', atRunnersPerHost: 4 },
    });
    expect(loadClient('node', steps.slice(0, 2), 2).limit).toEqual({
      kind: 'none',
      text: 'held every step (up to 2 clients): the limit is above the ramp',
    });
    const none = loadClient('pyepics', [judged(step('pyepics', 1, { missed: 1, lossFraction: 0.0001 }))], 5);
    expect(none).toMatchObject({ served: 0, limit: { kind: 'lost', atRunnersPerHost: 1 } });
  });

  it('the workload: the ramp rate per step, the latency threshold one update period', () => {
    expect(loadWorkload({ steps: [1, 2, 4], records: 1000, rate: 10, stepSeconds: 3 })).toEqual({
      steps: [1, 2, 4],
      records: 1000,
      rateHz: 10,
      seconds: 3,
      rampRatesHz: [100, 200, 400],
      latencyGrowthMs: 100,
    });
    expect(rampRate(10, 1000)).toBe(5000);
    expect(latencyGrowthMs(2)).toBe(500);
    expect(() => parseLoadSteps('1,4,2')).toThrow(/each step must run more runners than the one before \(2 after 4\)/);
    expect(() => parseLoadSteps('1,x')).toThrow(/"x" is not a number of runners/);
    expect(parseLoadSteps('1, 2,8')).toEqual([1, 2, 8]);
  });
});

/** A kept run with a load section: node served 2 (lost at 4), pyepics gave way at its first step. */
function benchWith(load: LoadResults): BenchResults {
  return {
    schema: BENCH_FORMAT,
    startedAt: '2026-11-25T10:00:00.000Z',
    host: hostname(),
    environment: {
      epicsperf: '0.1.0',
      node: 'v20',
      os: { platform: 'linux', release: '6', arch: 'x64' },
      cpu: { model: 'cpu', cores: 2 },
      memoryBytes: 2 ** 34,
      python: { executable: 'python3', kind: 'managed', ready: true, version: '3.11' },
      libraries: {},
    },
    options: {
      workloads: { snapshot: [], monitor: false, load: load.workload },
      repeat: 1,
      timeoutMs: 1000,
      records: 1000,
      samples: 30,
      rate: 10,
      clients: ['node', 'pyepics'],
      scheduling: '',
      profile: 'full',
    },
    unavailable: [],
    snapshot: [],
    load,
  };
}

function fixture(nodeServedUpTo: number): LoadResults {
  const first = judged(step('node', 1));
  const steps: LoadStepResult[] = [first];
  for (let n = 2; n <= nodeServedUpTo; n *= 2) steps.push(judged(step('node', n, { latencyMs: { p50: 2, p99: 12 + n } }), first));
  steps.push(
    judged(
      step('node', nodeServedUpTo * 2, {
        missed: 300,
        lossFraction: 0.003,
        latencyMs: { p50: 40, p99: 250 },
        fairness: { rampRateHz: 800, rampPublishedHz: 790, steadyFraction: 0.99, rampFraction: 0.6, ratio: 0.61 },
        hosts: [{ host: 'local', cpuPercent: 150, runners: nodeServedUpTo * 2, failed: 1, cores: 2 }],
        runners: [
          runner(),
          runner({ index: 2, ok: false, error: 'killed: its memory grew past 4096 MiB (4100 MiB): it fell behind the updates' }),
        ],
      }),
      first,
    ),
  );
  const { fairness: _, ...noFairness } = step('pyepics', 1, {
    missed: 2,
    lossFraction: 0.0002,
    rampError: 'PREFIX:RAMP:RATE could not be set to 100: no reply within the timeout',
  });
  const py = judged(noFairness);
  steps.push(py);
  const workload = loadWorkload({ steps: [1, 2, 4, 8], records: 1000, rate: 10, stepSeconds: 5 });
  return {
    workload,
    hosts: [{ name: 'local', address: 'vm', cores: 2 }],
    iocHost: 'local',
    steps,
    clients: [loadClient('node', steps, 4), loadClient('pyepics', steps, 4)],
    stealPercent: 0.2,
  };
}

describe('the load report', () => {
  it('a table per client and per step, the runners that failed, the schema, the summary figure', async () => {
    const bench = benchWith(fixture(2));
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(bench)))).toEqual([]);
    expect(schemaErrors('bench', { ...bench, load: { ...bench.load, steps: [{ client: 'node' }] } })).not.toEqual([]);
    expect(ran(bench)).toEqual({ workloads: ['load'], clients: ['node', 'pyepics'] });
    const text = renderBench(bench, false);
    expect(text).toMatch(
      /Load: N runners of one client on one host \(N = 1, 2, 4, 8\), each monitoring 1,000 counters at 10 Hz, against one IOC on local, 5 s per step/,
    );
    expect(text).toMatch(/node\s+2\s+20,000\s+14\.0\s+failed\s+at 4 runners: 1 of 2 runners failed/);
    expect(text).toMatch(/pyepics\s+0\s+-\s+-\s+lost\s+at 1 runner: lost 2 updates/);
    // every step: the aggregate, loss, latency, the host's and the IOC's CPU, fairness
    expect(text).toMatch(
      /node\s+4 runners\s+4\s+40,000\s+40,000\s+300\s+40\.0\/250\.0\s+150\s+20\s+10,000\s+800\s+99\.0\/60\.0\s+no \(failed\)/,
    );
    expect(text).toMatch(/Runners that failed:[\s\S]*node\s+4 runners\s+local #2\s+killed: its memory grew past 4096 MiB/);
    expect(text).toMatch(/pyepics at 1 runner: no fairness figure: PREFIX:RAMP:RATE could not be set to 100: no reply within the timeout/);
    expect(text).toMatch(/pyepics\s+1 runner .*10,000\s+-\s+-\s+no \(lost\)/);
    expect(renderBench(bench, true)).toMatch(/\| client \| clients served \| updates\/s there \|/);
    const w = workloadFigures(bench).find((x) => x.key === 'load')!;
    expect(w).toMatchObject({ figure: 'clients served with no loss', unit: 'clients', better: 'higher' });
    expect(w.clients.map((c) => [c.client, c.values, c.problems.length > 0])).toEqual([
      ['node', [2], false],
      ['pyepics', [], true],
    ]);
    const html = await benchHtml(bench);
    const section = html.slice(html.indexOf('<section id="w-load">'));
    expect(section).toContain('updates/s received and p99 latency against the clients served');
    expect((section.match(/<svg/g) ?? []).length).toBe(2);
    expect(section).toContain('Runners that failed');
  });

  it('compare takes clients served, higher is better', () => {
    const rows = compareRuns(benchWith(fixture(2)), benchWith(fixture(4))).filter((r) => r.workload === 'load');
    expect(rows.map((r) => [r.client, r.a?.median, r.b?.median, r.worsePct])).toEqual([
      ['node', 2, 4, -50],
      ['pyepics', undefined, undefined, undefined],
    ]);
  });
});
