// Write throughput of the capture writer (packages/epicsperf/src/capture/writer.ts) to a file on disk: scalar PVs,
// and one PV of 1M-element double arrays, flushed (and fsynced) after each period's updates; and
// the flush time of 1000 counters at 10 and 50 Hz (a 1 s period), which must stay under 1000 ms.
// Run after `npm run build`: node benchmarks/capture-writer.mjs [dir] [quick]   (default: os.tmpdir())
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureWriter } from '../packages/epicsperf/dist/capture/writer.js';

const dir = mkdtempSync(join(process.argv[2] ?? tmpdir(), 'epicsperf-capture-bench-'));

/** Feed `updates` updates per flush for `flushes` flushes; report MB/s of file written. */
async function run(label, { pvs, count, perFlush, flushes, fsync }) {
  const path = join(dir, `${label}.h5`);
  const w = await CaptureWriter.open(path, { fsync });
  const ids = Array.from({ length: pvs }, (_, i) => w.addPv(`BENCH:PV${i}`, { nativeType: 'double', count }));
  w.flush();
  const array = count > 1 ? new Float64Array(count) : undefined;
  let k = 0;
  let flushMs = 0;
  let maxMs = 0;
  let cpuUs = 0;
  const t0 = performance.now();
  for (let f = 0; f < flushes; f++) {
    for (let u = 0; u < perFlush; u++, k++) {
      const id = ids[u % pvs];
      const now = 1.7e9 + k * 1e-3;
      w.append(id, { value: array ? array.fill(k) : k, timestamp: now, received: now + 1e-4, severity: 0, status: 0 });
    }
    const c0 = process.cpuUsage();
    const ms = w.flush().ms;
    const c = process.cpuUsage(c0);
    cpuUs += c.user + c.system;
    flushMs += ms;
    maxMs = Math.max(maxMs, ms);
  }
  const totalMs = performance.now() - t0;
  w.close();
  const bytes = statSync(path).size;
  const mb = bytes / 1e6;
  console.log(
    [
      label,
      `${k} updates`,
      `${mb.toFixed(1)} MB`,
      `total ${(mb / (totalMs / 1e3)).toFixed(1)} MB/s`,
      `flush only ${(mb / (flushMs / 1e3)).toFixed(1)} MB/s`,
      `${(k / (totalMs / 1e3) / 1e3).toFixed(0)} k updates/s`,
      `flush mean ${(flushMs / flushes).toFixed(0)} ms, max ${maxMs.toFixed(0)} ms, CPU ${(cpuUs / 1e3 / flushes).toFixed(0)} ms`,
    ].join('  |  '),
  );
  rmSync(path);
}

try {
  // 1000 counters at 10 and 50 Hz, flushed each second: the flush time is what counts
  await run('counters-1000pv-10Hz-fsync', { pvs: 1000, count: 1, perFlush: 10_000, flushes: 10, fsync: true });
  await run('counters-1000pv-50Hz-fsync', { pvs: 1000, count: 1, perFlush: 50_000, flushes: 10, fsync: true });
  for (const fsync of process.argv[3] === 'quick' ? [] : [true, false]) {
    const tag = fsync ? 'fsync' : 'no-fsync';
    // 1000 counters at 100 Hz: 100,000 updates a flush, 20 flushes
    await run(`scalars-1000pv-${tag}`, { pvs: 1000, count: 1, perFlush: 100_000, flushes: 20, fsync });
    // one 1M-double waveform, 10 updates a flush (80 MB), 10 flushes
    await run(`array-1M-double-${tag}`, { pvs: 1, count: 1_000_000, perFlush: 10, flushes: 10, fsync });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
