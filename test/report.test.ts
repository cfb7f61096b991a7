// The reporters are pure functions of results: tables sort by the figure and give ratios to the
// best.
import { describe, expect, it } from 'vitest';
import { summarizeMonitor, monitorTable } from '../src/report/monitor.js';
import { summarizeSnapshot, snapshotBenchTable } from '../src/report/snapshot-bench.js';
import { stat, type BenchResults, type MonitorRun, type SnapshotRun } from '../src/results/index.js';
import { stealMeter } from '../src/bench/procstat.js';
import { renderBench } from '../src/report/bench.js';

const mon = (client: string, cpu: number[], ok = true, error?: string): MonitorRun => ({
  client, ok, ...(error && { error }),
  cpuPercent: { ...stat(cpu)!, samples: cpu },
  check: { pvs: 1, silentPvs: 0, incompletePvs: 0, samples: 10, gaps: 0, missedValues: ok ? 0 : 3, valueErrors: 0, timestampErrors: 0,
    staleTimestamps: 0, severityErrors: 0, latencyMs: { p50: 1, p99: 2, max: 3 }, updatesPerSecond: 10, findings: [], ok },
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
    const run = (client: string, wallMs: number, answered: number): SnapshotRun => ({ client, ok: true, wallMs, answered, failed: 2, wrong: 0, rows: [] });
    const rows = summarizeSnapshot(new Map([['a', [run('a', 2000, 10), run('a', 3000, 10)]], ['b', [run('b', 1000, 10)]]]));
    expect(rows.map((r) => [r.client, r.wallS!.median, r.ratio])).toEqual([['b', 1, 1], ['a', 2.5, 2.5]]);
    expect(snapshotBenchTable(rows)).toMatch(/a\s+2\.500 \(2\.000-3\.000\)\s+2\.5\s+10\/12/);
  });
});

describe('snapshot notes', () => {
  it('notes a client that answered fewer PVs than exist, so its wall time does not flatter it', () => {
    const run = (client: string, answered: number): SnapshotRun => ({ client, ok: true, wallMs: 1000, answered, failed: 1095 - answered, wrong: 0, rows: [] });
    const rows = summarizeSnapshot(new Map([['full', [run('full', 1000)]], ['partial', [run('partial', 848), run('partial', 900)]]]), 1000);
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
      schema: 'epicsperf/bench@2', startedAt: '', host: 'h', unavailable: [], monitor: undefined, array: undefined,
      environment: { epicsperf: '0', node: 'v20', python: { version: '3' }, cpu: { model: 'cpu', cores: 2 } } as BenchResults['environment'],
      options: { repeat: 1, timeoutMs: 1000, scheduling: '' } as BenchResults['options'],
      snapshot: [{ workload: { id: '97', connected: 97, missing: 0 }, runs: [], stealPercent }],
    });
    expect(renderBench(results(27.6), false)).toMatch(/Snapshot 97: .* timeout 1000 ms · CPU steal 28%\n/);
    expect(renderBench(results(0.4), false)).not.toMatch(/steal/);
  });
});
