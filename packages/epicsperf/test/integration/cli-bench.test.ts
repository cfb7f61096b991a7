// `bench` on the quick profile with two clients, end to end on the built-in IOC: its structure
// (workloads, sizes, the three latency sizes, one run each, the client deadline), one plain progress line per step when
// stderr is not a terminal, the run kept as JSON and HTML and listed by `results`; and a client
// past its deadline is stopped while the other goes on.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';
import { PROFILES } from '../../src/bench/profiles.js';
import { ARRAY_DEFAULTS } from '../../src/workloads/array.js';
import { LATENCY_DEFAULTS } from '../../src/workloads/latency.js';
import { MONITOR_DEFAULTS } from '../../src/workloads/monitor.js';
import { SNAPSHOT_DEFAULTS } from '../../src/workloads/snapshot.js';
import type { BenchResults } from '../../src/results/index.js';

describe('bench, quick profile', () => {
  it('two clients: every workload of the quick profile once, progress per step, the run kept and listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-quick-'));
    const r = await runCli(['bench', '--clients', 'node,c-libca', '--results-dir', dir], { timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    const q = {
      monitor: MONITOR_DEFAULTS.quick,
      latency: LATENCY_DEFAULTS.quick,
      array: ARRAY_DEFAULTS.quick,
      snapshot: SNAPSHOT_DEFAULTS.quick,
    };
    // One line per finished step: 2 snapshots, monitor, array and latency, for each of the two
    // clients, and the crossing of each of the quick profile's servers of CA (node and softioc;
    // c-libca is the run's reference client of CA).
    const steps = r.stderr.split('\n').filter((l) => /^\[\d+\/12\] /.test(l));
    expect(steps.map((l) => l.replace(/: .*/, ''))).toEqual([
      '[1/12] snapshot 97+15 · node · run 1/1',
      '[2/12] snapshot 97+15 · c-libca · run 1/1',
      '[3/12] snapshot 1000+95 · node · run 1/1',
      '[4/12] snapshot 1000+95 · c-libca · run 1/1',
      `[5/12] monitor ${q.monitor.records}x${q.monitor.samples} · node · run 1/1`,
      `[6/12] monitor ${q.monitor.records}x${q.monitor.samples} · c-libca · run 1/1`,
      '[7/12] array 1,000,000 · node · run 1/1',
      '[8/12] array 1,000,000 · c-libca · run 1/1',
      `[9/12] latency ${q.latency.sizes.length} sizes · node · run 1/1`,
      `[10/12] latency ${q.latency.sizes.length} sizes · c-libca · run 1/1`,
      '[11/12] crossing CA · node · run 1/1',
      '[12/12] crossing CA · softioc · run 1/1',
    ]);
    expect(steps[8]).toMatch(/: p50 [\d.]+ ms at 100,000 elements \(\d+ s; \d+ s in all\)$/);
    expect(steps[2]).toMatch(/: 1000\/1095 answered in [\d.]+ s \(\d+ s; \d+ s in all\)$/);

    const json = r.stderr.match(/results: (.*\.json)\n/)?.[1];
    const html = r.stderr.match(/report: (.*\.html)\n/)?.[1];
    expect(json && existsSync(json) && html && existsSync(html)).toBeTruthy();
    expect(json!.startsWith(dir)).toBe(true);
    const res = JSON.parse(readFileSync(json!, 'utf8')) as BenchResults;
    expect(schemaErrors('bench', res)).toEqual([]);
    expect(res.options).toMatchObject({
      profile: 'quick',
      repeat: 1,
      clientDeadlineS: PROFILES.quick.clientDeadlineS,
      clientDeadlineBeyondWork: true,
      records: q.monitor.records,
      samples: q.monitor.samples,
    });
    expect(res.snapshot.map((s) => s.workload.id)).toEqual(q.snapshot);
    expect(res.snapshot.map((s) => s.runs.map((x) => x.client))).toEqual([
      ['node', 'c-libca'],
      ['node', 'c-libca'],
    ]);
    expect(res.snapshot.map((s) => s.runs[0]!.answered)).toEqual([97, 1000]);
    // libca does not always find every name within the 1 s timeout on a loaded 2-core machine
    // (its search backoff); the count is kept either way, and checked against the IOC.
    expect(res.snapshot[1]!.runs[1]!.answered).toBeGreaterThan(0);
    expect(res.snapshot.flatMap((s) => s.runs.map((x) => x.wrong))).toEqual([0, 0, 0, 0]);
    expect(res.monitor!.runs.map((x) => [x.client, x.ok])).toEqual([
      ['node', true],
      ['c-libca', true],
    ]);
    expect(res.array!.workload).toEqual({ elements: 1_000_000, samples: q.array.samples, rate: q.array.rate });
    expect(res.array!.runs.map((x) => [x.client, x.array?.elements, x.array?.corrupt])).toEqual([
      ['node', 1_000_000, 0],
      ['c-libca', 1_000_000, 0],
    ]);
    // Three latency sizes, every round of each measured, and a fit through them.
    expect(res.latency!.workload).toEqual({
      sizes: q.latency.sizes,
      elementType: q.latency.elementType,
      samplesPerSize: q.latency.samplesPerSize,
    });
    expect(q.latency.sizes).toHaveLength(3);
    expect(res.latency!.runs.map((x) => [x.client, x.ok, x.points.map((p) => p.updates)])).toEqual(
      ['node', 'c-libca'].map((c) => [c, true, q.latency.sizes.map(() => q.latency.samplesPerSize)]),
    );
    expect(res.latency!.runs.every((x) => x.fit?.roundTrip !== undefined)).toBe(true);
    // The error, where a run has one, is in the difference shown.
    expect(res.crossing!.runs.map((x) => [x.server, x.protocol, x.client, x.ok, x.error ?? null])).toEqual(
      ['node', 'softioc'].map((server) => [server, 'CA', 'c-libca', true, null]),
    );
    expect(res.arrayPut).toBeUndefined();
    expect(res.durationS).toBeGreaterThan(0);
    const page = readFileSync(html!, 'utf8');
    expect(page).toMatch(/<section id="summary">/);
    expect(page).toMatch(/<figure class="chart latency">/);

    const list = await runCli(['results', '--results-dir', dir]);
    expect(list.stdout).toMatch(
      /quick\s+2: node,c-libca\s+97\+15, 1000\+95, monitor, array, latency, crossing\s+snapshot 97\+15: (node|c-libca) [\d.]+ s/,
    );
  }, 240_000);

  it('a results folder that cannot be written is a one-line error before anything runs', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'epicsperf-quick-')), 'a-file');
    writeFileSync(file, 'x');
    const r = await runCli(['bench', '--clients', 'node', '--results-dir', join(file, 'sub')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`epicsperf: error: cannot keep results in ${join(file, 'sub')}: ENOTDIR\n`);
    expect(r.ms).toBeLessThan(10_000);
  });

  it('a client past its deadline is a row saying so, and the next client still runs', async () => {
    // pyepics reads one name after another: 15 missing names take it 15 s at a 1 s timeout.
    const r = await runCli(
      ['bench', 'snapshot', '--clients', 'pyepics,node', '--snapshots', '97+15', '--deadline', '6', '--no-keep', '--format', 'json'],
      { timeoutMs: 120_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as BenchResults;
    expect(res.options.profile).toBe('custom');
    const [py, node] = res.snapshot[0]!.runs;
    expect(py).toMatchObject({ client: 'pyepics', ok: false, stoppedAfterS: expect.any(Number) });
    expect(py!.stoppedAfterS).toBeGreaterThanOrEqual(6);
    expect(py!.stoppedAfterS).toBeLessThan(8);
    expect(py!.error).toMatch(/^stopped after 6 s \(its deadline\) while reading 112 names$/);
    expect(node).toMatchObject({ client: 'node', ok: true, answered: 97 });
    expect(r.stderr).toMatch(/\[1\/2\] snapshot 97\+15 · pyepics · run 1\/1: stopped after 6 s/);
  }, 120_000);
});
