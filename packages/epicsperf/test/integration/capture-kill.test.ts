// A capture writer SIGKILLed after a flush leaves a file that h5py opens, with every update up to
// that flush and none of the buffered ones after it; killed at any write of a flush, it leaves the
// file as the previous flush left it (or, after the flush's last write, as that flush did). The
// same holds for the Python writers' file (epicsperf_runners.capture_file, h5py through capture_ordered.py).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dumpWithH5py } from '../helpers/capture.js';
import { pythonJson } from 'epicsperf-testkit/python';
import { ensurePythonEnv, pythonModule } from '../../src/pyenv/index.js';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = new URL('../../dist/capture/writer.js', import.meta.url);

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

// The child counts the writes that reach the file during its third flush (they go through the
// fs.writeSync it wraps before the writer exists) and kills itself just before the Kth.
const KILL_CHILD = `
const fs = (await import('node:fs')).default;
const K = Number(process.argv[3]);
let armed = false, n = 0;
const write = fs.writeSync;
fs.writeSync = function (...a) {
  if (armed && ++n === K) process.kill(process.pid, 'SIGKILL');
  return write.apply(fs, a);
};
const { CaptureWriter } = await import(process.argv[1]);
const w = await CaptureWriter.open(process.argv[2], { fsync: false });
const ids = Array.from({ length: 20 }, (_, i) => w.addPv('PV' + i, { nativeType: 'double', count: 1 }));
const a = w.addPv('ARR', { nativeType: 'double', count: 3000 });
const v = w.addPv('DYN', { nativeType: 'long', count: 50, varying: true });
for (let round = 1; round <= 3; round++) {
  for (let r = 0; r < 700; r++) for (const id of ids) w.append(id, { value: round * 1000 + r, timestamp: round * 1000 + r, received: round, severity: round, status: r % 7 });
  for (let r = 0; r < 3; r++) w.append(a, { value: new Float64Array(3000).fill(round), timestamp: round, received: round, severity: 0, status: 0 });
  w.append(v, { value: Int32Array.from({ length: round * 7 }, (_, i) => i), timestamp: round, received: round, severity: 0, status: 0 });
  armed = round === 3;
  w.flush();
  process.stdout.write('flushed ' + round + ' after ' + n + ' writes\\n');
}
process.kill(process.pid, 'SIGKILL');
`;

// h5py, one process for every file: per PV the rounds it holds, each checked exactly, or what is wrong.
const PY_ROUNDS = `
import json, sys, h5py, numpy as np
out = {}
for path in sys.argv[1:]:
    res = {}
    try:
        with h5py.File(path, 'r') as f:
            for name, g in f['pvs'].items():
                # a reader takes the smallest length of the per-update datasets (the format page);
                # each dataset must hold whole rounds with exact contents
                if name == 'ARR':
                    v = g['value'][()]
                    n = v.shape[0] // 3
                    ok = v.shape[0] == 3 * n and (v == np.repeat(np.arange(1, n + 1), 3)[:, None]).all()
                elif name == 'DYN':
                    ln = g['length'][()]
                    n = min(len(ln), len(g['offset']))
                    ok = (ln == 7 * np.arange(1, len(ln) + 1)).all() and len(g['value']) in (7 * n * (n + 1) // 2, 7 * (n + 1) * (n + 2) // 2)
                else:
                    lens = {k: len(g[k]) for k in ('value', 'timestamp', 'received', 'severity', 'status')}
                    n = min(lens.values()) // 700
                    exp = (np.arange(2100) // 700 + 1) * 1000 + np.arange(2100) % 700
                    ok = all(x in (1400, 2100) for x in lens.values())
                    ok = ok and (g['value'][()] == exp[:lens['value']]).all() and (g['timestamp'][()] == exp[:lens['timestamp']]).all()
                    ok = ok and (g['severity'][()] == exp[:lens['severity']] // 1000).all()
                    ok = ok and (g['status'][()] == (exp[:lens['status']] % 1000) % 7).all()
                res[name] = n if ok else 'wrong contents: ' + json.dumps(lens if name not in ('ARR', 'DYN') else {})
    except Exception as e:
        res = {'error': str(e)[:200]}
    out[path] = res
print(json.dumps(out))
`;

// The same child in Python: the writes counted are those OrderedFile makes (os.pwrite).
const PY_KILL_CHILD = `
import os, signal, sys
import numpy as np
K = int(sys.argv[2])
armed, n = False, 0
real = os.pwrite
def pwrite(fd, data, pos):
    global n
    if armed:
        n += 1
        if n == K:
            os.kill(os.getpid(), signal.SIGKILL)
    return real(fd, data, pos)
os.pwrite = pwrite
from epicsperf_runners import capture_file
cf = capture_file.CaptureFile(sys.argv[1], True, 'kill-test', {}, {}, 'now', fsync=False)
ids = [cf.add_pv('PV%d' % i, 'double', 1) for i in range(20)]
a = cf.add_pv('ARR', 'double', 3000)
v = cf.add_pv('DYN', 'long', 50, varying=True)
for rnd in (1, 2, 3):
    for r in range(700):
        for pv in ids:
            cf.append(pv, float(rnd * 1000 + r), float(rnd * 1000 + r), float(rnd), rnd, r % 7)
    for r in range(3):
        cf.append(a, np.full(3000, rnd, 'f8'), rnd, rnd, 0, 0)
    cf.append(v, np.arange(rnd * 7, dtype='<i4'), rnd, rnd, 0, 0)
    armed = rnd == 3
    cf.flush()
    print('flushed %d after %d writes' % (rnd, n), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
`;

async function killAt(k: number, writer: 'node' | 'python' = 'node'): Promise<{ path: string; out: string }> {
  const path = join(dir, `${writer}-during-${k}.h5`);
  const [cmd, args] =
    writer === 'node'
      ? [process.execPath, ['--input-type=module', '-e', KILL_CHILD, WRITER.href, path, String(k)]]
      : [await ensurePythonEnv(), ['-c', PY_KILL_CHILD, path, String(k)]];
  const env = writer === 'python' ? { ...process.env, ...pythonModule('capture_file').env } : process.env;
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const signal = await new Promise((r) => child.on('close', (_code, sig) => r(sig)));
  expect(signal).toBe('SIGKILL');
  return { path, out };
}

for (const writer of ['node', 'python'] as const) {
  it(`a ${writer} writer killed at any write of a flush leaves the previous flush readable, or the whole flush`, async () => {
    // a first run counts the writes of the third flush; then kills at the first, the middle and each
    // of the last few (the in-place updates come last), and just after the flush
    const full = await killAt(1_000_000, writer);
    const total = Number(/flushed 3 after (\d+) writes/.exec(full.out)?.[1]);
    expect(total).toBeGreaterThan(20);
    const points = [1, Math.floor(total / 2), total - 6, total - 3, total - 1, total];
    const runs = await Promise.all(points.map((k) => killAt(k, writer)));
    const held = await pythonJson<Record<string, Record<string, number | string>>>(PY_ROUNDS, [full.path, ...runs.map((r) => r.path)], {});
    expect(Object.values(held[full.path]!)).toEqual(new Array(22).fill(3));
    runs.forEach((r, i) => {
      const what = `kill at write ${points[i]} of ${total}: ${JSON.stringify(held[r.path])}`;
      expect(r.out.includes('flushed 3'), what).toBe(false);
      // every PV holds whole, exact rounds: all of the second flush, and the third only if its updates landed
      for (const n of Object.values(held[r.path]!)) expect([2, 3], what).toContain(n);
    });
    // killed before the in-place updates, the file is exactly as the second flush left it
    for (const r of runs.slice(0, 2)) expect(Object.values(held[r.path]!)).toEqual(new Array(22).fill(2));
  }, 240_000);
}
