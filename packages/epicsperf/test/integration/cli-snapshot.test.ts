// The tool's own command line end to end: snapshot's --ioc builtin and --client on the built-in
// IOC, monitor and bench, and bad input to them (epics-ops's snapshot: packages/ops/test/integration).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorLines, runCli } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';

describe('epicsperf snapshot', () => {
  it('reads fixtures/pvs.txt on the built-in IOC: 97 answered, 15 failed, in about the timeout', async () => {
    const r = await runCli(['snapshot', 'fixtures/pvs.txt', '--ioc', 'builtin', '--timeout', '1000', '--format', 'json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      answered: number;
      failed: number;
      wallMs: number;
      rows: { name: string; ok: boolean; severityName?: string; error?: string }[];
    };
    expect(out.answered).toBe(97);
    expect(out.failed).toBe(15);
    expect(out.wallMs).toBeGreaterThan(950);
    expect(out.wallMs).toBeLessThan(2000);
    expect(
      out.rows.filter((x) => !x.ok).every((x) => x.name.startsWith('TEST:MISSING') && /search|timeout|not found/i.test(x.error ?? '')),
    ).toBe(true);
    expect(out.rows.filter((x) => x.ok).every((x) => x.severityName === 'MINOR')).toBe(true);
    expect(schemaErrors('snapshot', out)).toEqual([]);
  });

  it("prints a table with a summary line, and exits 0 when every PV answered: read in the command's process, or by a client of --client in its own", async () => {
    const input = 'TEST:CALC1\n# a comment\n\nTEST:KIND:LONG\n';
    for (const [args, client] of [
      [[], 'epics-client'],
      [['--client', 'node'], 'node'],
      [['--client', 'pyepics'], 'pyepics'],
    ] as const) {
      const r = await runCli(['snapshot', '-', '--ioc', 'builtin', '--timeout', '2000', ...args], { input });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^name\s+value\s+severity/);
      expect(r.stdout).toMatch(/TEST:KIND:LONG\s+42\s+NO_ALARM/);
      expect(r.stdout).toMatch(new RegExp(`2 answered, 0 failed in [\\d.]+ s \\(client ${client}, timeout 2000 ms\\)`));
    }
  });

  const dir = mkdtempSync(join(tmpdir(), 'epicsperf-cli-'));
  it.each([
    ['an unknown client', () => ['snapshot', 'fixtures/pvs.txt', '--client', 'nosuch'], /unknown client "nosuch"/],
    [
      '--save with a benchmark client',
      () => ['snapshot', 'fixtures/pvs.txt', '--save', join(dir, 'y.snapshot'), '--client', 'pyepics'],
      /--save reads with epics-client in this process, without --client/,
    ],
    [
      '--save with --check',
      () => ['snapshot', 'fixtures/pvs.txt', '--save', join(dir, 'z.snapshot'), '--check'],
      /--save reads on this host, without --hosts or --check/,
    ],
    [
      'a bad IOC choice',
      () => ['snapshot', 'fixtures/pvs.txt', '--ioc', 'mars'],
      /option '--ioc <ioc>' argument 'mars' is invalid\. Allowed choices are env, builtin/,
    ],
    [
      'a bench workload that does not exist',
      () => ['bench', 'nonsense'],
      /workload must be snapshot, monitor, array, array-put, latency, crossing, storm, capture, headroom, load or all/,
    ],
    ['a bench client list naming an unknown client', () => ['bench', '--clients', 'node,bogus'], /unknown client "bogus"/],
    [
      'a bad array refresh rate',
      () => ['bench', 'array', '--array-rate', 'fast'],
      /option '--array-rate <hz>' argument 'fast' is invalid\. expected a number > 0 or max/,
    ],
    ['a monitor client that does not monitor', () => ['monitor', '--client', 'caget-procs'], /does not run the monitor workload/],
    [
      'a bench capture client that does not capture',
      () => ['bench', 'capture', '--clients', 'node,c-libca'],
      /client c-libca does not run the capture workload: choose from node, pyepics, p4p/,
    ],
    [
      'a bench capture deadline no longer than a step',
      () => ['bench', 'capture', '--capture-seconds', '5', '--deadline', '5'],
      /--deadline \(5 s\) must be longer than a capture step \(--capture-seconds 5\)/,
    ],
    [
      'a bench capture step that is not one',
      () => ['bench', 'capture', '--capture-steps', '1000x10,array:0x10'],
      /"array:0x10" is not a step: counters x Hz \(1000x10/,
    ],
  ])('rejects %s with one line and exit 2', async (_what, args, re) => {
    const r = await runCli(args());
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(re);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('still takes --ioc external on monitor, as env, with a note', async () => {
    const r = await runCli(['monitor', '--ioc', 'external', '--client', 'nosuch']);
    expect(r.stderr).toMatch(/note: --ioc external is now spelled --ioc env/);
    expect(r.stderr).toMatch(/unknown client "nosuch"/); // parsing went past --ioc
    expect(r.code).toBe(2);
  });
});

describe('epicsperf monitor and bench', () => {
  it('monitor: a small run on the built-in IOC checks every sample', async () => {
    const r = await runCli(['monitor', '--client', 'node', '--records', '20', '--samples', '15', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      run: { ok: boolean; check: { samples: number; missedValues: number }; cpuPercent?: { samples: number[] } };
    };
    expect(out.run.ok).toBe(true);
    expect(out.run.check.samples).toBe(300);
    expect(out.run.check.missedValues).toBe(0);
    expect(schemaErrors('monitor', out)).toEqual([]);
  });

  it('bench: one table per workload and a JSON file with the environment', async () => {
    const outFile = join(mkdtempSync(join(tmpdir(), 'epicsperf-bench-')), 'results.json');
    const r = await runCli(
      [
        'bench',
        'all',
        '--clients',
        'node,c-libca',
        '--repeat',
        '1',
        '--snapshots',
        '97+4',
        '--records',
        '20',
        '--samples',
        '12',
        '--array-elements',
        '1000',
        '--array-samples',
        '5',
        '--array-rate',
        '20',
        '--no-keep',
        '--out',
        outFile,
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Snapshot 97\+4: 97 PVs that exist \+ 4 missing/);
    expect(r.stdout).toMatch(/Monitor: 20 counters x 12 samples/);
    expect(r.stdout).toMatch(/\nnode\s+[\d.]+/);
    expect(r.stdout).toMatch(/\nc-libca\s+[\d.]+/);
    const json = JSON.parse(readFileSync(outFile, 'utf8')) as {
      schema: string;
      environment: { node: string };
      snapshot: { runs: { answered: number }[] }[];
      monitor: { runs: unknown[] };
    };
    expect(json.schema).toBe('epicsperf/bench@2');
    expect(json.environment.node).toBe(process.version);
    expect(json.snapshot[0]!.runs.map((x) => x.answered)).toEqual([97, 97]);
    expect(json.monitor.runs).toHaveLength(2);
    expect(schemaErrors('bench', json)).toEqual([]);
  });

  it('bench array: every update checked, and the JSON file conforms to the schema', async () => {
    const outFile = join(mkdtempSync(join(tmpdir(), 'epicsperf-bench-')), 'array.json');
    const r = await runCli(
      [
        'bench',
        'array',
        '--clients',
        'node',
        '--repeat',
        '1',
        '--array-elements',
        '1000',
        '--array-samples',
        '5',
        '--array-rate',
        '20',
        '--no-keep',
        '--out',
        outFile,
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.code).toBe(0);
    const json = JSON.parse(readFileSync(outFile, 'utf8')) as {
      array: { runs: { ok: boolean; array: { elements: number; corrupt: number } }[] };
    };
    expect(json.array.runs[0]).toMatchObject({ ok: true, array: { elements: 1000, corrupt: 0 } });
    expect(schemaErrors('bench', json)).toEqual([]);
  });
});
