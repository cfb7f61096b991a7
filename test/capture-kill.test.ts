// A capture writer SIGKILLed after a flush leaves a file that h5py opens, with every update up to
// that flush and none of the buffered ones after it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dumpWithH5py } from './helpers/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = new URL('../dist/capture/writer.js', import.meta.url);

// The child: three flushed rounds of 100 counter updates and one 1000-element array update each,
// then a fourth round that is buffered only; it says "flushed <rounds>" and waits to be killed.
const CHILD = `
const { CaptureWriter } = await import(process.argv[1]);
const w = await CaptureWriter.open(process.argv[2], { toolVersion: 'kill-test' });
const c = w.addPv('TEST:CALC1', { nativeType: 'double', count: 1 });
const a = w.addPv('TEST:ARRAY', { nativeType: 'double', count: 1000 });
const v = w.addPv('TEST:DYN', { nativeType: 'long', count: 50, varying: true });
let k = 0;
for (let round = 1; round <= 4; round++) {
  for (let i = 0; i < 100; i++, k++) w.append(c, { value: k, timestamp: 1e9 + k, received: 1e9 + k + 0.5, severity: 1, status: 4 });
  w.append(a, { value: new Float64Array(1000).fill(round), timestamp: round, received: round, severity: 0, status: 0 });
  w.append(v, { value: Int32Array.from({ length: round * 10 }, (_, i) => i), timestamp: round, received: round, severity: 0, status: 0 });
  if (round < 4) { w.flush(); process.stdout.write('flushed ' + round + '\\n'); }
}
process.stdout.write('buffered\\n');
setInterval(() => {}, 1000);
`;

it('a writer killed after its third flush leaves a file h5py reads up to that flush', async () => {
  expect(existsSync(WRITER), 'dist/ is built (npm test builds it first)').toBe(true);
  const path = join(dir, 'killed.h5');
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, WRITER.href, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child said only: ${out}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('buffered')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.on('close', r));
  expect(out).toContain('flushed 3');

  const d = await dumpWithH5py(path);
  expect(d.attrs.tool_version).toBe('kill-test');
  const c = d.pvs['TEST:CALC1']!.datasets;
  expect(c.value!.data).toEqual(Array.from({ length: 300 }, (_, k) => k));
  expect(c.timestamp!.data).toEqual(Array.from({ length: 300 }, (_, k) => 1e9 + k));
  expect(c.received!.data).toEqual(Array.from({ length: 300 }, (_, k) => 1e9 + k + 0.5));
  expect(c.severity!.data).toEqual(new Array(300).fill(1));
  const a = d.pvs['TEST:ARRAY']!.datasets;
  expect(a.value!.shape).toEqual([3, 1000]);
  expect(a.value!.data).toEqual([1, 2, 3].flatMap((r) => new Array(1000).fill(r)));
  const v = d.pvs['TEST:DYN']!.datasets;
  expect(v.length!.data).toEqual([10, 20, 30]);
  expect(v.offset!.data).toEqual([0, 10, 30]);
  expect(v.value!.data).toEqual([10, 20, 30].flatMap((n) => Array.from({ length: n }, (_, i) => i)));
});
