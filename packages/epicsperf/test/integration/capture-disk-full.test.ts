// `epicsperf capture` onto a real filesystem that fills up (a 4 MiB tmpfs, mounted for the test;
// skipped, and says so, where mounting is not allowed): every client stops cleanly with the reason
// in one line and a non-zero exit, no stack trace, and h5py reads every update it flushed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { runCli } from 'epicsperf-testkit/cli';
import { dumpWithH5py } from '../helpers/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-disk-full-'));
const mnt = join(dir, 'small');
mkdirSync(mnt);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { stdio: 'pipe' });
const canMount = mounted.status === 0;
if (!canMount)
  console.warn(`capture-disk-full: skipped, cannot mount a tmpfs here: ${mounted.stderr?.toString().trim() || mounted.error?.message}`);
const list = join(dir, 'pvs.txt');
writeFileSync(list, 'TEST:CALC1\nTEST:ARRAY\n');
let ioc: Ioc | undefined;

beforeAll(async () => {
  // 20,000 doubles at 20 Hz: 3.2 MB/s, so the 4 MiB fill in about a second
  if (canMount) ioc = await startIoc({ records: 2, rate: 20, arrayElements: 20_000, arrayRate: 20 });
}, 90_000);
afterAll(async () => {
  await ioc?.stop();
  if (canMount) spawnSync('umount', [mnt], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(canMount)('a full disk during a capture', () => {
  it.each(['node', 'pyepics', 'p4p'])(
    '%s: a clean stop with the reason, and every flush kept',
    async (client) => {
      const out = join(mnt, `${client}.h5`);
      const r = await runCli(
        ['capture', list, '--out', out, '--client', client, '--flush-period', '300', '--duration', '60', '--format', 'json'],
        {
          env: ioc!.env,
          timeoutMs: 90_000,
        },
      );
      expect(r.code, r.stderr).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(
        lines.filter((l) => /^\s+at /.test(l)),
        r.stderr,
      ).toEqual([]);
      const errors = lines.filter((l) => l.startsWith('epicsperf: error:'));
      expect(errors, r.stderr).toHaveLength(1);
      expect(errors[0]).toMatch(/the capture stopped early: write failed: .*(ENOSPC|No space left on device)/);
      const summary = JSON.parse(r.stdout).run.summary as { error?: string; pvs: { name: string; updates: number }[] };
      expect(summary.error).toMatch(/ENOSPC|No space left/);

      const d = await dumpWithH5py(out);
      const c = d.pvs['TEST:CALC1']!.datasets;
      const n = c.value!.data.length;
      expect(n).toBeGreaterThan(0);
      for (const k of ['timestamp', 'received', 'severity', 'status']) expect(c[k]!.data.length).toBe(n);
      expect(c.timestamp!.data.every((t) => t > 1e9)).toBe(true);
      const a = d.pvs['TEST:ARRAY']!.datasets;
      const rows = a.value!.shape[0]!;
      expect(rows).toBeGreaterThan(0);
      expect(a.timestamp!.data.length).toBe(rows);
      // every flushed array is whole: each holds its update number in every element
      const firsts = Array.from({ length: rows }, (_, i) => a.value!.data[i * 20_000]!);
      for (let i = 0; i < rows; i++) expect(a.value!.data.slice(i * 20_000, (i + 1) * 20_000).every((v) => v === firsts[i])).toBe(true);
      expect(rows).toBeLessThanOrEqual(summary.pvs.find((p) => p.name === 'TEST:ARRAY')!.updates);
      rmSync(out, { force: true });
    },
    120_000,
  );
});
