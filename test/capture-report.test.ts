// The capture workload's reports: the per-client table (highest load kept, the step that broke
// it, the disk's rate), the text and HTML bench reports, and the JSON schemas of both outputs.
import { describe, expect, it } from 'vitest';
import type { BenchResults, CaptureBenchResults, CaptureRun, CaptureStep, CaptureStepResult } from '../src/results/index.js';
import { captureBenchTable, captureSummaryText } from '../src/report/capture.js';
import { renderBench } from '../src/report/bench.js';
import { benchHtml } from '../src/report/html.js';
import { schemaErrors } from './helpers/schema.js';

const run = (client: string, mb: number, lost: number, error?: string): CaptureRun => ({
  client, ok: error === undefined, ...(error !== undefined && { error }), cpuPercent: 12.5, peakRssMb: 80, warnings: lost ? ['cannot keep up: 3 updates lost'] : [],
  summary: {
    client, version: '1', file: '/tmp/x.h5', updates: 100, bytes: mb * 1e6 * 5, fileBytes: mb * 1e6 * 5, seconds: 5, flushes: 5,
    maxFlushMs: 300, meanFlushMs: 200, slowFlushes: 0,
    pvs: [{ name: 'TEST:ARRAY', updates: 100, bytes: mb * 1e6 * 5, gaps: lost ? 1 : 0, lost, overruns: 0, checked: true }],
  },
});
const step = (elements: number, rateHz: number): CaptureStep => ({
  kind: 'array', pvs: 1, elements, rateHz, offeredUpdatesS: rateHz, offeredMBs: (elements * 8 * rateHz) / 1e6,
});
const res = (client: string, s: CaptureStep, mb: number, lost: number): CaptureStepResult => ({
  client, step: s, run: run(client, mb, lost), updatesS: s.rateHz, mbS: mb, lost, kept: lost === 0,
});

const steps = [res('node', step(1e6, 10), 80, 0), res('node', step(1e6, 20), 120, 4), res('pyepics', step(1e6, 10), 40, 2)];
const capture: CaptureBenchResults = {
  seconds: 5, flushMs: 1000, diskMBs: 300, studyMBs: [50, 60], steps,
  clients: [{ client: 'node', best: steps[0]!, limit: steps[1]! }, { client: 'pyepics', limit: steps[2]! }],
};
const bench: BenchResults = {
  schema: 'epicsperf/bench@1', startedAt: '2026-01-01T00:00:00.000Z', unavailable: [], snapshot: [], monitor: undefined, array: undefined,
  environment: {
    epicsperf: '0.1.0', node: 'v20', os: { platform: 'linux', release: '6', arch: 'x64' }, cpu: { model: 'cpu', cores: 2 }, memoryBytes: 2 ** 34,
    python: { executable: 'python3', kind: 'managed', ready: true, version: '3.11' }, libraries: {},
  },
  options: {
    workloads: { snapshot: [], monitor: false, capture: { clients: ['node', 'pyepics'], seconds: 5, flushMs: 1000 } },
    repeat: 1, timeoutMs: 1000, records: 1000, samples: 100, rate: 10, clients: ['node', 'pyepics'], scheduling: 'x',
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

  it('joins the text and HTML bench reports, and the stored JSON fits the schema', () => {
    expect(renderBench(bench, false)).toMatch(/Capture to HDF5: .* disk 300 MB\/s sequential .* the study: 50-60 MB\/s/);
    const html = benchHtml(bench);
    expect(html).toContain('disk (sequential)');
    expect(html).toContain('the study (pandablocks)');
    expect(schemaErrors('bench', JSON.parse(JSON.stringify(bench)))).toEqual([]);
    expect(schemaErrors('bench', { ...bench, capture: { ...capture, steps: [{ client: 'node' }] } })).not.toEqual([]);
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
