// `bench capture` end to end on the built-in IOC: the load steps asked for (counters, then the
// waveform), climbed until the client loses updates, one progress step each, kept with its own
// section. A capacity measure: in the measure tier (vitest.config.ts), alone.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';
import type { BenchResults } from '../../src/results/index.js';

describe('bench capture', () => {
  it('bench capture: the load steps asked for, one progress step each, kept with its own section', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-bench-'));
    const steps = '1000x10,4000x100,array:100000x10';
    const r = await runCli(
      [
        'bench',
        'capture',
        '--clients',
        'node',
        '--capture-seconds',
        '1',
        '--capture-steps',
        steps,
        '--deadline',
        '60',
        '--results-dir',
        dir,
      ],
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => /^\[\d+\/\d+\] capture /.test(l));
    // 3 load steps at most; a kind the client lost updates at is not climbed further
    expect(lines[0]).toMatch(/^\[1\/3\] capture 1000 counters x 10 Hz · node · run 1\/1: /);
    const json = r.stderr.match(/results: (.*\.json)\n/)?.[1];
    const html = r.stderr.match(/report: (.*\.html)\n/)?.[1];
    const res = JSON.parse(readFileSync(json!, 'utf8')) as BenchResults;
    expect(schemaErrors('bench', res)).toEqual([]);
    expect(res.options).toMatchObject({
      profile: 'custom',
      workloads: { snapshot: [], monitor: false, capture: { clients: ['node'], seconds: 1, flushMs: 1000, steps: steps.split(',') } },
    });
    expect(res.options.clientDeadlineS).toBe(60);
    expect(res.options.clientDeadlineBeyondWork).toBeUndefined();
    expect(res.snapshot).toEqual([]);
    const c = res.capture!;
    expect(c.steps.length).toBe(lines.length);
    expect(c.steps[0]!.step).toMatchObject({ kind: 'scalar', pvs: 1000, rateHz: 10 });
    // The waveform's steps were climbed too (its first is within one client's reach).
    expect(c.steps.find((x) => x.step.kind === 'array')?.step).toMatchObject({ elements: 100_000, rateHz: 10 });
    expect(c.clients.map((x) => x.client)).toEqual(['node']);
    expect(c.diskMBs).toBeGreaterThan(0);
    const page = readFileSync(html!, 'utf8');
    expect(page).toMatch(/<a href="#w-capture">capture<\/a>/);
    expect(page).toMatch(/<section id="w-capture"><h2>Capture to HDF5: /);
  }, 240_000);
});
