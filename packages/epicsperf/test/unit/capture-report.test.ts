// The capture workload's reports: the per-client table (highest load kept, the step that broke
// it, the disk's rate), its workload entry (summary, charts, compare), the text and HTML bench
// reports, and the JSON schemas of both outputs.
import { describe, expect, it } from 'vitest';
import type { BenchResults, CaptureBenchResults, CaptureRun, CaptureStep, CaptureStepResult } from '../../src/results/index.js';
import { captureBenchTable, captureSummaryText } from '../../src/report/capture.js';
import { benchHtml, compareRuns, ran, renderBench, workloadFigures } from '../../src/workloads/index.js';
import { rank } from '../../src/report/figures.js';
import { schemaErrors } from '../helpers/schema.js';

const run = (client: string, mb: number, lost: number, error?: string): CaptureRun => ({
  client,
  ok: error === undefined,
  ...(error !== undefined && { error }),
  cpuPercent: 12.5,
  peakRssMb: 80,
  warnings: lost ? ['cannot keep up: 3 updates lost'] : [],
  summary: {
    client,
    version: '1',
    file: '/tmp/x.h5',
    updates: 100,
    bytes: mb * 1e6 * 5,
    fileBytes: mb * 1e6 * 5,
    seconds: 5,
    flushes: 5,
    maxFlushMs: 300,
    meanFlushMs: 200,
    slowFlushes: 0,
    pvs: [{ name: 'TEST:ARRAY', updates: 100, bytes: mb * 1e6 * 5, gaps: lost ? 1 : 0, lost, overruns: 0, checked: true }],
  },
});
const step = (elements: number, rateHz: number): CaptureStep => ({
  kind: 'array',
  pvs: 1,
  elements,
  rateHz,
  offeredUpdatesS: rateHz,
  offeredMBs: (elements * 8 * rateHz) / 1e6,
});
const res = (client: string, s: CaptureStep, mb: number, lost: number): CaptureStepResult => ({
  client,
  step: s,
  run: run(client, mb, lost),
  updatesS: s.rateHz,
  mbS: mb,
  lost,
  kept: lost === 0,
});

const steps = [res('node', step(1e6, 10), 80, 0), res('node', step(1e6, 20), 120, 4), res('pyepics', step(1e6, 10), 40, 2)];
const capture: CaptureBenchResults = {
  seconds: 5,
  flushMs: 1000,
  diskMBs: 300,
  studyMBs: [50, 60],
  steps,
  clients: [
    { client: 'node', best: steps[0]!, limit: steps[1]! },
    { client: 'pyepics', limit: steps[2]! },
  ],
};
const bench: BenchResults = {
  schema: 'epicsperf/bench@2',
  startedAt: '2026-01-01T00:00:00.000Z',
  host: 'h',
  durationS: 120,
  unavailable: [],
  snapshot: [],
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
    workloads: { snapshot: [], monitor: false, capture: { clients: ['node', 'pyepics'], seconds: 5, flushMs: 1000 } },
    repeat: 1,
    timeoutMs: 1000,
    records: 1000,
    samples: 100,
    rate: 10,
    clients: ['node', 'pyepics'],
    scheduling: 'x',
    profile: 'full',
  },
  capture,
};

describe('capture reports', () => {
  it('a row per client: the highest MB/s kept, its ratio to the disk, and the step that lost updates', () => {
    const t = captureBenchTable(capture);
    const node = t.split('\n').find((l) => l.startsWith('node'))!;
    expect(node).toMatch(/80\.0 .* 1\.00 .* 1,000,000 doubles x 10 Hz .* 0\.27 .* 1,000,000 doubles x 20 Hz: 4 lost/);
    expect(t.split('\n').find((l) => l.startsWith('pyepics'))).toMatch(/^pyepics\s+-\s+-.*2 lost/);
  });

  it('a workload of the summary and compare: highest MB/s kept, higher is better; no figure at the first step is incomplete', () => {
    const w = workloadFigures(bench).find((x) => x.key === 'capture')!;
    expect(w).toMatchObject({ unit: 'MB/s', better: 'higher' });
    expect(w.references).toEqual([
      { label: 'disk (sequential)', value: 300 },
      { label: 'the study (pandablocks)', value: 50, to: 60 },
    ]);
    const { best, order } = rank(w);
    expect(best?.client).toBe('node');
    expect(best?.stat?.median).toBe(80);
    expect(best?.problems).toEqual([]);
    const py = order.find((c) => c.client === 'pyepics')!;
    expect(py.stat).toBeUndefined();
    expect(py.problems).toEqual(['2 updates lost at its first step (1,000,000 doubles x 10 Hz)']);
    // a run that failed, or was stopped at its deadline, is incomplete too
    const failed: BenchResults = {
      ...bench,
      capture: {
        ...capture,
        steps: [
          steps[0]!,
          { ...steps[1]!, lost: 0, run: { ...run('node', 0, 0, 'stopped after 30 s (its deadline) while capturing'), stoppedAfterS: 30 } },
        ],
        clients: [{ client: 'node', best: steps[0]!, limit: steps[1]! }],
      },
    };
    const node = workloadFigures(failed).find((x) => x.key === 'capture')!.clients[0]!;
    expect(node.stoppedAfterS).toBe(30);
    expect(node.problems).toEqual(['1,000,000 doubles x 20 Hz: stopped after 30 s (its deadline) while capturing']);
    // compare: B wrote half as much, which is worse since higher is better
    const half: BenchResults = { ...bench, capture: { ...capture, clients: [{ client: 'node', best: { ...steps[0]!, mbS: 40 } }] } };
    const row = compareRuns(bench, half).find((r) => r.workload === 'capture' && r.client === 'node')!;
    expect(row.ratio).toBe(0.5);
    expect(row.worsePct).toBe(100);
  });

  it('joins the text and HTML bench reports, and the stored JSON fits the schema', async () => {
    expect(renderBench(bench, false)).toMatch(/Capture to HDF5: .* disk 300 MB\/s sequential .* the study: 50-60 MB\/s/);
    const html = await benchHtml(bench);
    // its own section: the chart with the disk and the study as lines, the per-client table, every step
    const section = html.slice(html.indexOf('<section id="w-capture">'));
    expect(section).toMatch(/<h2>Capture to HDF5: /);
    expect(section).toContain('disk (sequential)');
    expect(section).toContain('the study (pandablocks)');
    expect(section).toMatch(/<svg/);
    expect(section).toMatch(/1,000,000 doubles x 20 Hz: 4 lost/);
    expect(section).toContain('Every load step');
    // and a row of the summary on top
    expect(html).toMatch(/<a href="#w-capture">capture<\/a><div class="unit">highest MB\/s written with zero loss, higher is better/);
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(bench)))).toEqual([]);
    expect(schemaErrors('bench', { ...bench, capture: { ...capture, steps: [{ client: 'node' }] } })).not.toEqual([]);
    // and `epicsperf results` lists the run by it
    expect(ran(bench)).toEqual({ workloads: ['capture'], clients: ['node', 'pyepics'] });
  });

  it("the capture command's summary and its JSON output", () => {
    const r = run('node', 8, 3);
    const text = captureSummaryText(r);
    expect(text).toMatch(/TEST:ARRAY\s+100\s+40\.000\s+1\s+3/);
    expect(text).toMatch(/100 updates, 40\.00 MB of data in 5\.0 s: 8\.00 MB\/s, 20 updates\/s/);
    expect(text).toMatch(/lost: 3 updates in 1 gaps \(TEST:ARRAY 3\)/);
    expect(schemaErrors('capture', { schema: 'epicsperf/capture@1', options: {}, run: r })).toEqual([]);
  });
});
