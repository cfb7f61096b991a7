// The headroom workload on small ramps against the built-in IOC: clients that hold every step, a
// client killed for its memory, an injected gap reported as lost updates, a step the IOC cannot
// publish marked IOC-limited, the JSON against the schema, and `bench headroom` end to end.
import { beforeAll, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { ensurePythonEnv } from '../../src/pyenv/index.js';
import { findClient } from '../../src/clients/index.js';
import { headroomClient, headroomStep, iocRate, judge, latencyTrend, runHeadroom } from '../../src/bench/headroom.js';
import { headroomNote } from '../../src/report/headroom.js';
import type { IocStats } from '../../src/ioc/index.js';
import { Context } from '../../../client/src/index.js';
import type { Sample } from '../../src/bench/samples.js';
import { BENCH_FORMAT, type BenchResults, type EnvironmentReport, type HeadroomResults, type MonitorRun } from '../../src/results/index.js';
import { benchHtml, renderBench } from '../../src/workloads/index.js';
import { schemaErrors } from '../helpers/schema.js';
import { runCli } from 'epicsperf-testkit/cli';

const clients = (...names: string[]) => names.map((n) => findClient(n)!);

const ENV: EnvironmentReport = {
  epicsperf: '0.1.0',
  node: 'v20',
  os: { platform: 'linux', release: '6', arch: 'x64' },
  cpu: { model: 'cpu', cores: 2 },
  memoryBytes: 2 ** 34,
  python: { executable: 'python3', kind: 'managed', ready: true, version: '3.11' },
  libraries: {},
};

function benchOf(headroom: HeadroomResults): BenchResults {
  return {
    schema: BENCH_FORMAT,
    startedAt: new Date().toISOString(),
    host: hostname(),
    environment: ENV,
    options: {
      workloads: { snapshot: [], monitor: false, headroom: headroom.workload },
      repeat: 1,
      timeoutMs: 1000,
      records: 1,
      samples: 2,
      rate: 1,
      clients: [],
      scheduling: '',
      profile: 'custom',
    },
    unavailable: [],
    snapshot: [],
    headroom,
  };
}

describe('headroom against the built-in IOC', () => {
  let python: string;
  beforeAll(async () => {
    python = await ensurePythonEnv();
  });

  it('node and pyepics climb a small ramp: every step held, the IOC counted, the JSON fits the schema', async () => {
    // Low rates: on a loaded 2-core host pyepics has lost updates from about 5,000 updates/s.
    const workload = { seconds: 2, steps: [headroomStep(50, 10), headroomStep(100, 10)] };
    const skipped: number[] = [];
    const h = await runHeadroom({ clients: clients('node', 'pyepics'), python, workload, onSkip: (n) => skipped.push(n) });
    expect(h.runs.map((r) => [r.client, r.step.records])).toEqual([
      ['node', 50],
      ['pyepics', 50],
      ['node', 100],
      ['pyepics', 100],
    ]);
    for (const r of h.runs) {
      expect(r.failure, `${r.client} at ${r.step.records}`).toBeUndefined();
      expect(r.held).toBe(true);
      expect(r.run.check?.ok).toBe(true);
      // the IOC's own count over the collection: near the offered rate (generous: a loaded machine)
      expect(r.iocUpdatesS).toBeGreaterThan(0.5 * r.step.offeredUpdatesS);
      expect(r.iocUpdatesS).toBeLessThan(1.5 * r.step.offeredUpdatesS);
      expect(r.latencyEarlyMs).toBeGreaterThan(0);
    }
    expect(skipped).toEqual([]);
    for (const c of h.clients) {
      expect(c.heldAll).toBe(true);
      expect(c.best?.step.records).toBe(100);
      expect(c.past).toBeUndefined();
    }
    const bench = benchOf(h);
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(bench)))).toEqual([]);
    expect(schemaErrors('bench', { ...bench, headroom: { ...h, runs: [{ client: 'node' }] } })).not.toEqual([]);
    const text = renderBench(bench, false);
    expect(text).toMatch(/Headroom: scalar monitors at rising steps \(50 x 10 Hz, 100 x 10 Hz\)/);
    expect(text).toMatch(/node .* 100 x 10 Hz .* held the highest step/);
    const html = await benchHtml(bench);
    const section = html.slice(html.indexOf('<section id="w-headroom">'));
    expect(section).toMatch(/<svg/);
    expect(section).toContain("the IOC's highest published rate");
    expect(section).toContain('Every step');
  }, 180_000);

  it('a client over its memory limit is killed at the first step, and drops out of the rest', async () => {
    // Low rates: on a loaded 2-core host pyepics has lost updates from about 5,000 updates/s.
    const workload = { seconds: 2, steps: [headroomStep(50, 10), headroomStep(100, 10)] };
    const skipped: number[] = [];
    const h = await runHeadroom({ clients: clients('pyepics'), python, workload, maxRssMb: 5, onSkip: (n) => skipped.push(n) });
    expect(h.runs).toHaveLength(1);
    expect(skipped).toEqual([1]);
    const r = h.runs[0]!;
    expect(r.held).toBe(false);
    expect(r.failure?.mode).toBe('memory');
    expect(r.failure?.text).toMatch(/grew to \d+ MiB and was killed \(limit 5 MiB\)/);
    expect(h.clients[0]).toMatchObject({ client: 'pyepics', heldAll: false });
    expect(h.clients[0]!.best).toBeUndefined();
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(benchOf(h))))).toEqual([]);
  }, 120_000);

  it('a gap injected at the second step is reported as lost updates past the best step', async () => {
    const workload = { seconds: 3, steps: [headroomStep(100, 10), headroomStep(100, 20), headroomStep(200, 20)] };
    const h = await runHeadroom({
      clients: clients('node'),
      python,
      workload,
      onCollecting: (ioc, _client, step) => {
        if (step.rateHz !== 20) return;
        const ctx = new Context({ env: ioc.env });
        void ctx.put(`${ioc.prefix}SKIP`, 3).finally(() => ctx.close());
      },
    });
    expect(h.runs.map((r) => r.held)).toEqual([true, false]);
    const c = h.clients[0]!;
    expect(c.best?.step).toMatchObject({ records: 100, rateHz: 10 });
    expect(c.past?.failure?.mode).toBe('lost');
    // every counter skipped 3 values once
    expect(c.past?.failure?.text).toMatch(/^lost 300 updates in 100 gaps/);
    expect(renderBench(benchOf(h), false)).toMatch(/100 x 20 Hz: lost 300 updates in 100 gaps/);
  }, 120_000);

  it('a step the IOC cannot publish is marked IOC-limited', async () => {
    // 2,000 counters at 2 kHz: 4 M updates/s offered, far past what the IOC processes on this machine.
    const workload = { seconds: 0.05, steps: [headroomStep(2000, 2000)] };
    const h = await runHeadroom({ clients: clients('node'), python, workload });
    const r = h.runs[0]!;
    expect(r.iocUpdatesS).toBeGreaterThan(0);
    expect(r.iocLimited).toBe(true);
    expect(renderBench(benchOf(h), false)).toMatch(/IOC\/s[\s\S]*\(limited\)/);
  }, 120_000);
});

describe('judging a step', () => {
  const step = headroomStep(1, 10);
  const run = (o: Partial<MonitorRun> = {}): MonitorRun => ({
    client: 'x',
    ok: true,
    check: {
      pvs: 1,
      silentPvs: 0,
      incompletePvs: 0,
      samples: 40,
      gaps: 0,
      missedValues: 0,
      valueErrors: 0,
      timestampErrors: 0,
      staleTimestamps: 0,
      severityErrors: 0,
      latencyMs: undefined,
      updatesPerSecond: 10,
      findings: [],
      ok: true,
    },
    ...o,
  });
  // 40 updates at 10 Hz whose latency goes from 5 ms to `endMs` in a straight line
  const samples = (endMs: number): Sample[] =>
    Array.from({ length: 40 }, (_, i) => {
      const iocTime = 1000 + i / 10;
      return { pv: 0, severity: 1, status: 0, value: i, iocTime, recvTime: iocTime + (5 + ((endMs - 5) * i) / 39) / 1000 };
    });

  it('a steady latency holds; a latency that grows through the step has fallen behind', () => {
    expect(judge('x', step, run(), samples(6), 10).held).toBe(true);
    // the IOC published all it was offered, but with 90% of every core: it is the limit there
    const cpu = (mean: number) => ({ median: mean, min: mean, max: mean, mean, n: 1 });
    expect(judge('x', step, run({ iocCpuPercent: cpu(187) }), samples(6), 10, undefined, 2).iocLimited).toBe(true);
    expect(judge('x', step, run({ iocCpuPercent: cpu(110) }), samples(6), 10, undefined, 2).iocLimited).toBe(false);
    const behind = judge('x', step, run(), samples(2000), 10);
    expect(behind.held).toBe(false);
    expect(behind.failure?.mode).toBe('behind');
    expect(behind.failure?.text).toMatch(/^fell behind: latency grew from \d+(\.\d)? ms to \d+ ms through the step$/);
    const t = latencyTrend(samples(2000))!;
    expect(t.late).toBeGreaterThan(t.early + 1000);
  });

  it("the IOC's rate: ticks posted between the posts, times the share processed", () => {
    const at = (ticks: number, tickTime: number, counterValue: number, time: number) =>
      ({ ticks, tickTime, counterValue, time }) as IocStats;
    // 2 Hz, 9 ticks posted in 4 s, read mid-period at either end: exactly 2 ticks/s x 1000 counters
    expect(iocRate(at(10, 105, 10, 105.3), at(18, 109, 18, 109.4), 1000)).toBeCloseTo(2000, 6);
    // the last tick still being processed when asked is not a shortfall
    expect(iocRate(at(10, 105, 10, 105.3), at(18, 109, 17, 109.001), 1000)).toBeCloseTo(2000, 6);
    // half the posted ticks processed (the IOC's queue dropped the rest)
    expect(iocRate(at(1, 100, 1, 100), at(1001, 110, 501, 110), 10)).toBeCloseTo(501, 6);
    // a fresh IOC asked before its first tick (it once read as 4 updates/s): counted by the counter
    expect(iocRate(at(0, 0, 1, 100), at(8, 103.5, 9, 104), 1000)).toBeCloseTo(2000, 6);
    expect(iocRate(undefined, at(1, 1, 1, 1), 10)).toBeUndefined();
  });

  it('a client that held every step of an IOC-limited ramp says so instead of claiming a limit', () => {
    const top = judge('node', headroomStep(4000, 100), run(), samples(6), 150_000);
    const h: HeadroomResults = { workload: { seconds: 4, steps: [top.step] }, runs: [top], clients: [headroomClient('node', [top], 1)] };
    expect(top.iocLimited).toBe(true);
    expect(top.held).toBe(true);
    expect(h.clients[0]!.heldAll).toBe(true);
    expect(headroomNote(h.clients[0]!, h)).toBe('held the highest step (IOC-limited at 150,000 updates/s)');
  });

  it('a crash and a stop at the deadline are failures of their own kind; the IOC short of the rate is IOC-limited', () => {
    expect(judge('x', step, { client: 'x', ok: false, error: 'the runner exited with code 1' }, [], 10).failure).toEqual({
      mode: 'failed',
      text: 'the runner exited with code 1',
    });
    expect(judge('x', step, { client: 'x', ok: false, error: 'stopped after 30 s', stoppedAfterS: 30 }, [], 10).failure?.mode).toBe(
      'stopped',
    );
    expect(judge('x', step, run(), samples(6), 8).iocLimited).toBe(true);
    expect(judge('x', step, run(), samples(6), 9.5).iocLimited).toBe(false);
  });
});

it('the command line: `bench headroom` with node on a two-step ramp', async () => {
  const r = await runCli(
    [
      'bench',
      'headroom',
      '--clients',
      'node',
      '--headroom-steps',
      '100x10,200x10',
      '--headroom-seconds',
      '2',
      '--no-keep',
      '--format',
      'json',
    ],
    { timeoutMs: 120_000 },
  );
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.code).toBe(0);
  const json = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', json)).toEqual([]);
  expect(json.options.profile).toBe('custom');
  expect(json.headroom!.runs.map((x) => [x.client, x.step.records, x.held])).toEqual([
    ['node', 100, true],
    ['node', 200, true],
  ]);
  expect(r.stderr).toMatch(/\[2\/2\] headroom 200 x 10 Hz · node/);
  const bad = await runCli(['bench', 'headroom', '--headroom-steps', '100by10'], { timeoutMs: 30_000 });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/"100by10" is not RECORDSxHZ/);
  expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  const down = await runCli(['bench', 'headroom', '--headroom-steps', '1000x10,500x10'], { timeoutMs: 30_000 });
  expect(down.code).toBe(2);
  expect(down.stderr).toMatch(/each step must offer more updates\/s than the one before \(500 x 10 Hz after 1,000 x 10 Hz\)/);
  expect(down.stderr.trim().split('\n')).toHaveLength(1);
}, 150_000);
