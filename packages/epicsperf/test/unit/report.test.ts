// The reporters are pure functions of results: tables sort by the figure and give ratios to the
// best; array put and latency are workloads of the summary and of compare.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeMonitor, monitorTable } from '../../src/report/monitor.js';
import { summarizeSnapshot, snapshotBenchTable } from '../../src/report/snapshot-bench.js';
import {
  stat,
  type ArrayPutRun,
  type BenchResults,
  type LatencyPoint,
  type LatencyRun,
  type MonitorRun,
  type SnapshotRun,
} from '../../src/results/index.js';
import { stealMeter } from '../../src/procstat.js';
import { rank } from '../../src/report/figures.js';
import { benchHtml, compareRuns, renderBench, workloadFigures } from '../../src/workloads/index.js';

const mon = (client: string, cpu: number[], ok = true, error?: string): MonitorRun => ({
  client,
  ok,
  ...(error && { error }),
  cpuPercent: { ...stat(cpu)!, samples: cpu },
  check: {
    pvs: 1,
    silentPvs: 0,
    incompletePvs: 0,
    samples: 10,
    gaps: 0,
    missedValues: ok ? 0 : 3,
    valueErrors: 0,
    timestampErrors: 0,
    staleTimestamps: 0,
    severityErrors: 0,
    latencyMs: { p50: 1, p99: 2, max: 3 },
    updatesPerSecond: 10,
    findings: [],
    ok,
  },
});

describe('reports', () => {
  it('monitor: sorted by CPU, ratio to the best, missed values summed, failures noted', () => {
    const runs = new Map([
      ['slow', [mon('slow', [40, 42]), mon('slow', [44], false, 'sample check failed: gap')]],
      ['fast', [mon('fast', [1, 1.2])]],
      ['broken', [{ client: 'broken', ok: false, error: 'the runner exited (code 3) before ready: boom' } as MonitorRun]],
    ]);
    const rows = summarizeMonitor(runs);
    expect(rows.map((r) => r.client)).toEqual(['fast', 'slow', 'broken']);
    expect(rows[0]!.ratio).toBe(1);
    expect(rows[1]!.cpu!.median).toBeCloseTo(42.5, 5);
    expect(rows[1]!.ratio).toBeCloseTo(42.5 / 1.1, 5);
    expect(rows[1]!.missed).toBe(3);
    const text = monitorTable(rows);
    expect(text).toMatch(/fast\s+1\.10\s+1\.0\s+1\/1 ok/);
    expect(text).toMatch(/slow\s+42\.50 \(41\.00-44\.00\)\s+38\.6\s+1\/2 ok\s+3/);
    expect(text).toMatch(/broken .*before ready: boom/);
  });

  it('snapshot: wall time median with min-max and answered counts', () => {
    const run = (client: string, wallMs: number, answered: number): SnapshotRun => ({
      client,
      ok: true,
      wallMs,
      answered,
      failed: 2,
      wrong: 0,
      rows: [],
    });
    const rows = summarizeSnapshot(
      new Map([
        ['a', [run('a', 2000, 10), run('a', 3000, 10)]],
        ['b', [run('b', 1000, 10)]],
      ]),
    );
    expect(rows.map((r) => [r.client, r.wallS!.median, r.ratio])).toEqual([
      ['b', 1, 1],
      ['a', 2.5, 2.5],
    ]);
    expect(snapshotBenchTable(rows)).toMatch(/a\s+2\.500 \(2\.000-3\.000\)\s+2\.5\s+10\/12/);
  });

  it('snapshot: when the last answer came, from the rows or from the distribution kept in their place', () => {
    const rows = (ms: number[]): SnapshotRun['rows'] => [
      ...ms.map((elapsedMs, i) => ({ name: `TEST:CALC${i + 1}`, ok: true, value: 1, elapsedMs })),
      { name: 'TEST:MISSING1', ok: false, error: 'timeout', elapsedMs: 1000 },
    ];
    const full: SnapshotRun = { client: 'a', ok: true, wallMs: 1000, answered: 3, failed: 1, wrong: 0, rows: rows([120, 710, 300]) };
    const kept: SnapshotRun = {
      client: 'a',
      ok: true,
      wallMs: 1000,
      answered: 3,
      failed: 1,
      wrong: 0,
      rows: rows([]),
      rowsKept: 'failures',
      elapsedMs: { p50: 200, p99: 650, max: 690 },
    };
    const [row] = summarizeSnapshot(new Map([['a', [full, kept]]]), 3);
    expect(row!.lastAnswerS).toMatchObject({ median: 0.7, min: 0.69, max: 0.71 });
    expect(snapshotBenchTable([row!])).toMatch(/ 3\/4\s+0\.700 \(0\.690-0\.710\)\s+0\s/);
  });
});

describe('snapshot notes', () => {
  it('notes a client that answered fewer PVs than exist, so its wall time does not flatter it', () => {
    const run = (client: string, answered: number): SnapshotRun => ({
      client,
      ok: true,
      wallMs: 1000,
      answered,
      failed: 1095 - answered,
      wrong: 0,
      rows: [],
    });
    const rows = summarizeSnapshot(
      new Map([
        ['full', [run('full', 1000)]],
        ['partial', [run('partial', 848), run('partial', 900)]],
      ]),
      1000,
    );
    expect(rows.find((r) => r.client === 'full')!.error).toBeUndefined();
    expect(rows.find((r) => r.client === 'partial')!.error).toBe('up to 152 PVs that exist went unanswered');
  });
});

describe('host load', () => {
  it('steal is measured from /proc/stat as a share of the machine, and a loaded host is named in the table title', () => {
    const steal = stealMeter();
    const t = Date.now();
    while (Date.now() - t < 50); // some CPU time passes
    const p = steal();
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThanOrEqual(100);
    const results = (stealPercent: number): BenchResults => ({
      schema: 'epicsperf/bench@2',
      startedAt: '',
      host: 'h',
      unavailable: [],
      environment: {
        epicsperf: '0',
        node: 'v20',
        python: { version: '3' },
        cpu: { model: 'cpu', cores: 2 },
      } as BenchResults['environment'],
      options: { repeat: 1, timeoutMs: 1000, scheduling: '' } as BenchResults['options'],
      snapshot: [{ workload: { id: '97', connected: 97, missing: 0 }, runs: [], stealPercent }],
    });
    expect(renderBench(results(27.6), false)).toMatch(/Snapshot 97: .* timeout 1000 ms · CPU steal 28%\n/);
    expect(renderBench(results(0.4), false)).not.toMatch(/steal/);
  });
});

describe('array put and latency in the summary and compare', () => {
  const put = (client: string, callback: boolean, ioc: number, bad = 0): ArrayPutRun => ({
    client,
    callback,
    ok: bad === 0,
    puts: 10,
    failedPuts: 0,
    putsPerSecond: ioc,
    mElementsPerSecond: ioc,
    ioc: {
      received: 10,
      elements: 10_000_000,
      bad,
      findings: bad ? ['put 3: element 5 is 2, not 3'] : [],
      putsPerSecond: ioc,
      mElementsPerSecond: ioc,
    },
    ...(bad && { error: `the IOC found ${bad} bad` }),
  });
  const point = (elements: number, p50Ms: number): LatencyPoint => ({
    elements,
    bytes: elements * 8,
    updates: 5,
    p50Ms,
    p99Ms: p50Ms * 2,
    minMs: p50Ms / 2,
    maxMs: p50Ms * 3,
    ok: true,
  });
  const lat = (client: string, p50: number): LatencyRun => ({
    client,
    ok: true,
    points: [point(1, 0.1), point(100_000, p50)],
    fit: { roundTrip: { fixedMs: 0.1, mbPerS: 800_000 / p50 / 1000 } },
  });
  const results = (scale: number): BenchResults => ({
    schema: 'epicsperf/bench@2',
    startedAt: '2026-11-24T10:00:00Z',
    host: 'h',
    unavailable: [],
    snapshot: [],
    environment: { epicsperf: '0', node: 'v20', python: { version: '3' }, cpu: { model: 'cpu', cores: 2 } } as BenchResults['environment'],
    options: { repeat: 1, timeoutMs: 1000, scheduling: '', profile: 'quick' } as BenchResults['options'],
    arrayPut: {
      workload: { elements: 1_000_000, samples: 10, type: 'double' },
      runs: [put('node', true, 40 * scale), put('node', false, 90 * scale), put('pyepics', true, 20), put('pyepics', false, 30, 2)],
    },
    latency: {
      workload: { sizes: [1, 100_000], elementType: 'double', samplesPerSize: 5 },
      runs: [
        lat('node', 1.2 * scale),
        lat('c-libca', 1.0),
        { client: 'caget-procs', ok: false, unsupported: true, error: 'a one-shot reader: it neither puts nor monitors', points: [] },
      ],
    },
  });

  it('one workload per put mode and latency: the IOC-checked rate and the largest size as main figures, bad puts incomplete, clients that cannot put left out', () => {
    const w = workloadFigures(results(1));
    expect(w.map((x) => x.key)).toEqual(['array-put completion', 'array-put no completion', 'latency']);
    const none = w[1]!;
    expect(none.clients.map((c) => [c.client, c.stat?.median, c.problems])).toEqual([
      ['node', 90, []],
      ['pyepics', 30, ['the IOC found 2 bad puts']],
    ]);
    expect(rank(none).best?.client).toBe('node');
    const l = w[2]!;
    expect(l.figure).toBe('median round trip at 100,000 elements');
    expect(l.clients.map((c) => c.client)).toEqual(['node', 'c-libca']);
    expect(rank(l).best?.client).toBe('c-libca');
    // The text report keeps the row that says why, and the fit.
    const text = renderBench(results(1), false);
    expect(text).toMatch(/Array put: 10 puts per run of 1,000,000 double elements/);
    expect(text).toMatch(/caget-procs .* a one-shot reader/);
    expect(text).toMatch(/Fixed cost and slope of p50 against bytes/);
  });

  it('compare covers both put modes and latency', () => {
    const rows = compareRuns(results(1), results(2));
    const of = (wl: string, c: string) => rows.find((r) => r.workload === wl && r.client === c)!;
    expect(of('array-put completion', 'node').ratio).toBe(2);
    expect(of('array-put no completion', 'node').ratio).toBe(2);
    expect(of('latency', 'node').ratio).toBe(2);
    expect(rows.some((r) => r.client === 'caget-procs')).toBe(false);
  });

  it('the HTML report: the put modes and latency in the summary, the latency line chart, the per-size tables', async () => {
    const fixture = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'results', 'run-a.json'), 'utf8'),
    ) as BenchResults;
    const html = await benchHtml({ ...results(1), environment: fixture.environment, options: { ...fixture.options, profile: 'quick' } });
    expect(html).toMatch(/<a href="#w-array-put-completion">array-put completion<\/a>/);
    expect(html).toMatch(/<a href="#w-latency">latency<\/a>/);
    expect(html).toMatch(/<figure class="chart latency">/);
    expect(html).toMatch(/round trip p50 ms/);
  }, 60_000);
});
