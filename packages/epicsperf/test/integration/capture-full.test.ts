// A disk that fills up, as a file-size limit (ulimit -f) makes it: the flush that cannot be
// written fails with a clear error, the writer stops, and h5py reads every update of the flushes
// before it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dumpWithH5py } from '../helpers/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-full-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = new URL('../../dist/capture/writer.js', import.meta.url);

// Flushes rounds of 20 array updates (20 x 8000 bytes) and 200 counter updates until a flush fails.
const CHILD = `
process.on('SIGXFSZ', () => {});
const { CaptureWriter } = await import(process.argv[1]);
const w = await CaptureWriter.open(process.argv[2], {});
const c = w.addPv('TEST:CALC1', { nativeType: 'double', count: 1 });
const a = w.addPv('TEST:ARRAY', { nativeType: 'double', count: 1000 });
let round = 0, k = 0;
for (;;) {
  round++;
  for (let i = 0; i < 200; i++, k++) w.append(c, { value: k, timestamp: 1e9 + k, received: 1e9 + k, severity: 0, status: 0 });
  for (let i = 0; i < 20; i++) w.append(a, { value: new Float64Array(1000).fill(round), timestamp: round, received: round, severity: 0, status: 0 });
  try {
    w.flush();
  } catch (err) {
    process.stdout.write(JSON.stringify({ flushed: round - 1, error: String(err.message).split('\\n')[0] }));
    w.close();
    break;
  }
}
`;

it('a flush past a file-size limit fails cleanly and the file keeps every flush before it', async () => {
  const path = join(dir, 'full.h5');
  // ulimit -f counts 1024-byte blocks: 3 MB
  const child = spawn(
    'sh',
    ['-c', 'ulimit -f 3072 && exec "$0" --input-type=module -e "$1" "$2" "$3"', process.execPath, CHILD, WRITER.href, path],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise((r) => child.on('close', r));
  expect(code).toBe(0);
  const r = JSON.parse(out) as { flushed: number; error: string };
  expect(r.flushed).toBeGreaterThan(3);
  expect(r.error).toMatch(/./);
  expect(statSync(path).size).toBeLessThanOrEqual(3072 * 1024);
  const d = await dumpWithH5py(path);
  const c = d.pvs['TEST:CALC1']!.datasets;
  expect(c.value!.data).toEqual(Array.from({ length: 200 * r.flushed }, (_, k) => k));
  expect(c.timestamp!.data.length).toBe(200 * r.flushed);
  const a = d.pvs['TEST:ARRAY']!.datasets;
  expect(a.value!.shape).toEqual([20 * r.flushed, 1000]);
  expect(a.value!.data.filter((_, i) => i % 1000 === 0)).toEqual(Array.from({ length: 20 * r.flushed }, (_, i) => Math.floor(i / 20) + 1));
}, 60_000);
