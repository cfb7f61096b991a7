// compare on stored fixture runs: a known difference (B's node snapshot and c-libca monitor CPU
// doubled, ranges apart) and only noise (every figure inside the other's range); the rank test;
// --fail-on-regression; results listing and report on kept files; bad and old files exit 2.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mannWhitneyP, regressions, verdict } from '../../src/report/compare.js';
import { compareRuns } from '../../src/workloads/index.js';
import { loadResults } from '../../src/results/store.js';
import { runCli } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';

const F = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'results');
const A = join(F, 'run-a.json');
const B = join(F, 'run-b.json');
const NOISE = join(F, 'run-a-noise.json');

describe('compare', () => {
  it('the fixture runs conform to the bench schema', () => {
    for (const f of [A, B, NOISE]) expect(schemaErrors('bench', JSON.parse(readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('a known difference: exactly the two doubled figures are worse beyond the spread', () => {
    const rows = compareRuns(loadResults(A), loadResults(B));
    const worse = rows.filter((r) => verdict(r) === 'worse').map((r) => [r.workload, r.client, r.ratio, r.worsePct, r.test]);
    expect(worse).toEqual([
      ['snapshot 1000+95', 'node', 2, 100, 'min-max ranges apart'],
      ['monitor', 'c-libca', 2, 100, 'min-max ranges apart'],
    ]);
    expect(regressions(rows, 50).map((r) => `${r.workload} ${r.client}`)).toEqual(['snapshot 1000+95 node', 'monitor c-libca']);
    expect(regressions(rows, 150)).toEqual([]);
    // Incomplete results are named on the row.
    expect(rows.find((r) => r.workload === 'snapshot 1000+95' && r.client === 'pyepics')!.problems).toContain(
      'A: 400 PVs that exist unanswered',
    );
  });

  it('only noise: nothing beyond the spread, and no regression however small the threshold', () => {
    const rows = compareRuns(loadResults(A), loadResults(NOISE));
    const decided = rows.filter((r) => r.significant !== undefined);
    expect(decided.length).toBe(12);
    expect(decided.every((r) => verdict(r) === 'within the spread')).toBe(true);
    // Latency has one run per side: no spread, so it cannot be called noise.
    expect(rows.filter((r) => r.workload === 'latency' && r.ratio !== undefined).every((r) => r.test.startsWith('one run'))).toBe(true);
    expect(regressions(rows, 1)).toEqual([]);
  });

  it('the rank test: exact two-sided p of Mann-Whitney U, used from 4 repeats a side', () => {
    expect(mannWhitneyP([1, 2, 3, 4], [5, 6, 7, 8])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([5, 6, 7, 8], [1, 2, 3, 4])).toBeCloseTo(2 / 70, 10);
    expect(mannWhitneyP([1, 3, 5, 7], [2, 4, 6, 8])).toBeCloseTo(48 / 70, 10);
    expect(mannWhitneyP([1, 2, 3], [4, 5, 6])).toBeCloseTo(0.1, 10);
    const a = loadResults(A);
    const b = structuredClone(a);
    // Five runs a side of the monitor, B's overlapping A's range but shifted up: the ranges overlap, the ranks do not mix.
    a.monitor!.runs = [10, 11, 12, 13, 20].map((cpu) => ({
      ...a.monitor!.runs[0]!,
      client: 'node',
      cpuPercent: { median: cpu, min: cpu, max: cpu, mean: cpu, n: 1, samples: [cpu] },
    }));
    b.monitor!.runs = [19, 21, 22, 23, 24].map((cpu) => ({
      ...a.monitor!.runs[0]!,
      client: 'node',
      cpuPercent: { median: cpu, min: cpu, max: cpu, mean: cpu, n: 1, samples: [cpu] },
    }));
    const row = compareRuns(a, b).find((r) => r.workload === 'monitor')!;
    expect(row.test).toMatch(/^rank test \(Mann-Whitney, 5\+5 runs, p=0\.0(1|2)\d\)$/);
    expect(verdict(row)).toBe('worse');
  });
});

describe('compare, report and results on the command line', () => {
  it('compare prints the table, Markdown and HTML; --fail-on-regression exits 1 only beyond the threshold', async () => {
    const t = await runCli(['compare', A, B]);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(
      /snapshot 1000\+95\s+node\s+1\.150 \(1\.100-1\.200\)\s+2\.300 \(2\.200-2\.400\)\s+2\.00\s+\+100% worse\s+worse\s+min-max ranges apart/,
    );
    const md = await runCli(['compare', A, B, '--format', 'markdown']);
    expect(md.stdout).toMatch(/^\| monitor \| c-libca \| .* \| 2\.00 \| \+100% worse \| worse \| min-max ranges apart \|/m);
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-compare-'));
    const html = await runCli(['compare', A, B, '--html', join(dir, 'c.html'), '--format', 'html']);
    expect(html.stdout).toBe(readFileSync(join(dir, 'c.html'), 'utf8'));
    expect(html.stdout.match(/<tr class="worse">/g)).toHaveLength(2);
    const fail = await runCli(['compare', A, B, '--fail-on-regression', '50']);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toMatch(/2 regression\(s\) beyond 50%: snapshot 1000\+95 node \+100%, monitor c-libca \+100%/);
    expect((await runCli(['compare', A, B, '--fail-on-regression', '150'])).code).toBe(0);
    expect((await runCli(['compare', A, NOISE, '--fail-on-regression', '1'])).code).toBe(0);
  });

  it('old, foreign and broken files: one line naming the version, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-bad-'));
    writeFileSync(join(dir, 'not.json'), '{"schema": ');
    writeFileSync(join(dir, 'snap.json'), '{"schema": "epicsperf/snapshot@1"}');
    for (const [args, msg] of [
      [
        ['report', join(F, 'old-format.json')],
        /old-format\.json is in results format epicsperf\/bench@1; this epicsperf reads epicsperf\/bench@2 only/,
      ],
      [['compare', A, join(F, 'old-format.json')], /results format epicsperf\/bench@1/],
      [
        ['report', join(dir, 'snap.json')],
        /is not an epicsperf bench result \(format epicsperf\/snapshot@1; expected epicsperf\/bench@2\)/,
      ],
      [['compare', join(dir, 'not.json'), A], /not\.json is not JSON/],
      [['report', join(dir, 'missing.json')], /cannot read .*missing\.json: ENOENT/],
    ] as const) {
      const r = await runCli([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });

  it('report renders several runs side by side, with HTML and Markdown files; results lists kept runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-report-'));
    const r = await runCli(['report', A, B, '--html', join(dir, 'r.html'), '--markdown', join(dir, 'r.md')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/client\s+#1 2026-11-20 10:00 lab-a\s+#2 2026-11-21 10:00 lab-b/);
    expect(r.stdout).toMatch(/node\s+1\.150 \(1\.100-1\.200\)\s+2\.300 \(2\.200-2\.400\)/);
    expect(r.stdout).toMatch(/pyepics\s+✗ 0\.925 \(0\.900-0\.950\)\s+✗ 0\.925 \(0\.920-0\.930\)/);
    expect(readFileSync(join(dir, 'r.md'), 'utf8')).toMatch(/^\| node \| 1\.150 \(1\.100-1\.200\) \| 2\.300 \(2\.200-2\.400\) \|$/m);
    expect(readFileSync(join(dir, 'r.html'), 'utf8')).toMatch(/<table class="summary">/);

    const kept = join(dir, 'kept');
    expect((await runCli(['results', '--results-dir', kept])).stdout).toBe(`no kept runs in ${kept}\n`);
    await runCli(['report', A, '--html', join(dir, 'x.html')]);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(kept);
    copyFileSync(A, join(kept, 'bench-2026-11-20T10-00-00Z-lab-a.json'));
    copyFileSync(B, join(kept, 'bench-2026-11-21T10-00-00Z-lab-b.json'));
    copyFileSync(join(F, 'old-format.json'), join(kept, 'bench-2026-10-01T10-00-00Z-old.json'));
    const list = await runCli(['results', '--results-dir', kept]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n').slice(4);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/results format epicsperf\/bench@1/);
    expect(lines[1]).toMatch(
      /^2026-11-20 10:00:00\s+lab-a\s+full\s+3: node,c-libca,pyepics\s+97\+15, 1000\+95, monitor, array, latency\s+snapshot 97\+15: c-libca 0\.150 s\s+bench-2026-11-20T10-00-00Z-lab-a\.json$/,
    );
    expect(lines[2]).toMatch(/^2026-11-21 10:00:00\s+lab-b\s+full/);
  });
});
