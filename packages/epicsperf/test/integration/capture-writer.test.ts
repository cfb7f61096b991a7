// CaptureWriter: a file with scalars, fixed and varying arrays and gaps, read back with h5wasm
// and with h5py (the independent reader), every value, timestamp and attribute checked; and the
// Python runners' writer (capture_file.py) makes the same file from the same updates.
import { mkdtempSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CaptureWriter, CaptureError, type PvMeta } from '../../src/capture/writer.js';
import type { ThreadedWriter as Threaded } from '../../src/capture/worker.js';
import { GapDetector, type GapRecord } from '../../src/capture/gaps.js';
import { pythonModule } from '../../src/pyenv/index.js';
import { dumpWithH5py, dumpWithH5wasm, type CaptureDump } from '../helpers/capture.js';
import { pythonJson } from 'epicsperf-testkit/python';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Expect {
  name: string;
  group: string;
  meta: PvMeta;
  values: (number | number[])[];
  gaps: GapRecord[];
}

const T0 = 1_700_000_000.125;
const ts = (pv: number, k: number) => T0 + pv * 10 + k * 0.25;
const rx = (pv: number, k: number) => ts(pv, k) + 0.0625;

const PVS: Expect[] = [
  {
    name: 'TEST:CALC1',
    group: 'TEST:CALC1',
    meta: { nativeType: 'double', count: 1, units: 'counts', precision: 0 },
    values: [1, 2, 3, 4, 7, 8, 9, 10, 11, 13],
    gaps: [],
  },
  {
    name: 'TEST:KIND:ENUM',
    group: 'TEST:KIND:ENUM',
    meta: { nativeType: 'enum', count: 1, enumStrings: ['Off', 'On', 'Fault'] },
    values: [0, 1, 2, 1],
    gaps: [],
  },
  {
    name: 'TEST:KIND:ARR:FLOAT',
    group: 'TEST:KIND:ARR:FLOAT',
    meta: { nativeType: 'float', count: 5, units: 'V', precision: 2 },
    values: [
      [0, 0.5, 1, 1.5, 2],
      [1, 1.5, 2, 2.5, 3],
      [-2, -1.5, -1, -0.5, 0],
    ],
    gaps: [],
  },
  {
    name: 'TEST:ARRAY',
    group: 'TEST:ARRAY',
    meta: { nativeType: 'double', count: 4 },
    values: [
      [1, 1, 1, 1],
      [2, 2, 2, 2],
      [5, 5, 5, 5],
      [6, 6, 6, 6],
    ],
    gaps: [],
  },
  {
    name: 'TEST:KIND:DYN',
    group: 'TEST:KIND:DYN',
    meta: { nativeType: 'double', count: 100, varying: true },
    values: [[0, 1, 2], [], [0, 1, 2, 3, 4, 5, 6], [9.5], [1e300, -0]],
    gaps: [],
  },
  {
    name: 'A/B%C.',
    group: 'A%2FB%25C.',
    meta: { nativeType: 'long', count: 1, units: 'µs' },
    values: [2147483647, -2147483648, 0],
    gaps: [],
  },
  {
    name: 'TEST:KIND:CHAR',
    group: 'TEST:KIND:CHAR',
    meta: { nativeType: 'char', count: 3 },
    values: [
      [0, 200, 255],
      [1, 2, 3],
    ],
    gaps: [],
  },
  { name: 'TEST:KIND:SHORT', group: 'TEST:KIND:SHORT', meta: { nativeType: 'short', count: 1 }, values: [], gaps: [] },
];

async function threadedWriter(): Promise<typeof Threaded> {
  return ((await import(new URL('../../dist/capture/worker.js', import.meta.url).href)) as { ThreadedWriter: typeof Threaded })
    .ThreadedWriter;
}

/** Writes PVS with CaptureWriter, or with ThreadedWriter (HDF5 in a worker thread, the buffers' memory handed back and forth). */
async function writeSample(path: string, threaded = false): Promise<void> {
  const opts = { toolVersion: '0.1.0', options: { flushMs: 1000, pvs: 'pvs.txt' }, environment: { node: process.version } };
  // the worker thread runs the built module (a worker cannot load the TypeScript source)
  const w = threaded ? await (await threadedWriter()).open(path, opts) : await CaptureWriter.open(path, opts);
  for (const p of PVS) p.gaps.length = 0;
  const ids = PVS.map((p) => w.addPv(p.name, p.meta));
  const detectors = PVS.map(() => new GapDetector());
  // interleave the PVs and flush three times, so every dataset grows in several blocks
  const longest = Math.max(...PVS.map((p) => p.values.length));
  for (let k = 0; k < longest; k++) {
    PVS.forEach((p, i) => {
      const v = p.values[k];
      if (v === undefined) return;
      const value = typeof v === 'number' ? v : i === 2 ? new Float32Array(v) : v;
      const row = w.append(ids[i]!, { value, timestamp: ts(i, k), received: rx(i, k), severity: k % 4, status: k % 22 });
      expect(row).toBe(k);
      if (i === 0 || i === 3) {
        const gap = detectors[i]!.observe(row, value);
        if (gap) {
          w.appendGap(ids[i]!, gap);
          p.gaps.push(gap);
        }
      }
    });
    if (k === 1 || k === 4) await w.flush();
  }
  await w.close();
  if (!threaded) await w.close();
}

/** The same updates, flushes and gap checks as writeSample, through the Python runners' CaptureFile and GapDetector. */
const PY_WRITE = `
import json, sys
from epicsperf_runners.capture_file import CaptureFile, GapDetector
path, spec = sys.argv[1], json.loads(sys.argv[2])
f = CaptureFile(path, True, "0.1.0", {"flushMs": 1000, "pvs": "pvs.txt"}, {"node": spec["node"]}, spec["created"])
pvs = [f.add_pv(p["name"], p["meta"]["nativeType"], p["meta"]["count"], varying=p["meta"].get("varying", False),
                units=p["meta"].get("units"), precision=p["meta"].get("precision"), enum_strings=p["meta"].get("enumStrings"))
       for p in spec["pvs"]]
detectors = [GapDetector() for _ in pvs]
gaps = [[] for _ in pvs]
for k in range(max(len(p["values"]) for p in spec["pvs"])):
    for i, p in enumerate(spec["pvs"]):
        if k >= len(p["values"]):
            continue
        value = p["values"][k]
        value = [float(x) if isinstance(x, str) else x for x in value] if isinstance(value, list) else value
        row = f.append(pvs[i], value, spec["ts"][i][k], spec["rx"][i][k], k % 4, k % 22)
        if i in (0, 3):
            gap = detectors[i].observe(row, value)
            if gap:
                f.append_gap(pvs[i], gap)
                gaps[i].append(list(gap))
    if k in (1, 4):
        f.flush()
f.close()
print(json.dumps(gaps))
`;

function rows<T>(data: T[], width: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < data.length; i += width) out.push(data.slice(i, i + width));
  return out;
}

function checkDump(d: CaptureDump): void {
  expect(d.attrs).toMatchObject({ format: 'epicsperf-capture', format_version: 1, tool: 'epicsperf', tool_version: '0.1.0' });
  expect(JSON.parse(String(d.attrs.options))).toEqual({ flushMs: 1000, pvs: 'pvs.txt' });
  expect(JSON.parse(String(d.attrs.environment))).toEqual({ node: process.version });
  expect(Date.parse(String(d.attrs.created))).toBeGreaterThan(Date.now() - 600_000);
  expect(Object.keys(d.pvs).sort()).toEqual(PVS.map((p) => p.name).sort());
  PVS.forEach((p, i) => {
    const g = d.pvs[p.name]!;
    expect(g.group).toBe(p.group);
    const layout = p.meta.varying ? 'varying' : p.meta.count === 1 ? 'scalar' : 'fixed';
    const attrs: Record<string, unknown> = { name: p.name, index: i, native_type: p.meta.nativeType, count: p.meta.count, layout };
    if (p.meta.units !== undefined) attrs.units = p.meta.units;
    if (p.meta.precision !== undefined) attrs.precision = p.meta.precision;
    if (p.meta.enumStrings) attrs.enum_strings = p.meta.enumStrings;
    expect(g.attrs).toEqual(attrs);
    const n = p.values.length;
    const ds = g.datasets;
    const names = ['gaps', 'received', 'severity', 'status', 'timestamp', 'value'];
    if (layout === 'varying') names.push('length', 'offset');
    expect(Object.keys(ds).sort()).toEqual(names.sort());
    const dtype = { double: 'float64', float: 'float32', enum: 'uint16', long: 'int32', char: 'uint8', short: 'int16' }[p.meta.nativeType];
    expect(ds.value!.dtype).toBe(dtype);
    if (layout === 'scalar') {
      expect(ds.value!.shape).toEqual([n]);
      expect(ds.value!.maxshape).toEqual([null]);
      expect(ds.value!.data).toEqual(p.values);
    } else if (layout === 'fixed') {
      expect(ds.value!.shape).toEqual([n, p.meta.count]);
      expect(ds.value!.maxshape).toEqual([null, p.meta.count]);
      expect(rows(ds.value!.data, p.meta.count)).toEqual(p.values);
    } else {
      const lengths = p.values.map((v) => (v as number[]).length);
      const offsets = lengths.map((_, k) => lengths.slice(0, k).reduce((a, b) => a + b, 0));
      expect(ds.length!.dtype).toBe('uint32');
      expect(ds.offset!.dtype).toBe('uint64');
      expect(ds.length!.data).toEqual(lengths);
      expect(ds.offset!.data).toEqual(offsets);
      expect(ds.value!.maxshape).toEqual([null]);
      const values = p.values.map((_, k) => ds.value!.data.slice(offsets[k], offsets[k]! + lengths[k]!));
      expect(values).toEqual(p.values);
    }
    for (const c of ['timestamp', 'received', 'severity', 'status', 'value']) expect(ds[c]!.chunks).not.toBeNull();
    expect(ds.timestamp!.dtype).toBe('float64');
    expect(ds.timestamp!.data).toEqual(p.values.map((_, k) => ts(i, k)));
    expect(ds.received!.data).toEqual(p.values.map((_, k) => rx(i, k)));
    expect(ds.severity!.dtype).toBe('uint8');
    expect(ds.severity!.data).toEqual(p.values.map((_, k) => k % 4));
    expect(ds.status!.dtype).toBe('uint16');
    expect(ds.status!.data).toEqual(p.values.map((_, k) => k % 22));
    expect(ds.gaps!.dtype).toBe('float64');
    expect(ds.gaps!.shape).toEqual([p.gaps.length, 4]);
    expect(ds.gaps!.attrs).toEqual({ columns: ['index', 'before', 'after', 'lost'] });
    expect(rows(ds.gaps!.data, 4)).toEqual(p.gaps.map((gp) => [gp.index, gp.before, gp.after, gp.lost]));
  });
}

describe('CaptureWriter', () => {
  const path = join(dir, 'run.h5');

  it('the Python writer (capture_file.py) makes the same file from the same updates: every dataset, chunk and attribute but the creation time', async () => {
    const nodePath = join(dir, 'node.h5');
    await writeSample(nodePath);
    const pyPath = join(dir, 'python.h5');
    const spec = {
      node: process.version,
      created: new Date().toISOString(),
      pvs: PVS.map((p) => ({ name: p.name, meta: p.meta, values: p.values })),
      ts: PVS.map((p, i) => p.values.map((_, k) => ts(i, k))),
      rx: PVS.map((p, i) => p.values.map((_, k) => rx(i, k))),
    };
    // JSON has no -0: it goes as the text "-0.0"
    const json = JSON.stringify(spec, (_k, v: unknown) => (Object.is(v, -0) ? '-0.0' : v));
    const gaps = await pythonJson<number[][][]>(PY_WRITE, [pyPath, json], pythonModule('capture_file').env);
    expect(gaps).toEqual(PVS.map((p) => p.gaps.map((g) => [g.index, g.before, g.after, g.lost])));
    const [node, python] = await Promise.all([dumpWithH5py(nodePath), dumpWithH5py(pyPath)]);
    for (const d of [node, python]) delete d.attrs.created;
    expect(python).toEqual(node);
  });

  it('writes scalars, fixed and varying arrays and gaps that h5wasm and h5py read back exactly', async () => {
    await writeSample(path);
    // the gaps the detector found: the counter skipped 5,6 and 12; the array skipped 3,4
    expect(PVS[0]!.gaps).toEqual([
      { index: 4, before: 4, after: 7, lost: 2 },
      { index: 9, before: 11, after: 13, lost: 1 },
    ]);
    expect(PVS[3]!.gaps).toEqual([{ index: 2, before: 2, after: 5, lost: 2 }]);
    checkDump(await dumpWithH5wasm(path));
    checkDump(await dumpWithH5py(path));
  });

  it('writes the same file from a worker thread, each period refilling the memory of the one before', async () => {
    // the values of each period are transferred to the worker and come back once written; an
    // update written into memory the worker still read from would show in the values
    const threadedPath = join(dir, 'threaded.h5');
    await writeSample(threadedPath, true);
    checkDump(await dumpWithH5wasm(threadedPath));
  });

  it('refuses an existing file unless force', async () => {
    const existing = join(dir, 'existing.h5');
    writeFileSync(existing, 'keep me');
    await expect(CaptureWriter.open(existing)).rejects.toMatchObject({ code: 'ERR_EPICSPERF_CAPTURE_EXISTS' });
    expect(statSync(existing).size).toBe(7);
    const w = await CaptureWriter.open(existing, { force: true });
    w.close();
    expect((await dumpWithH5wasm(existing)).pvs).toEqual({});
  });

  it('an unwritable path is a clear error and leaves nothing behind', async () => {
    const missingDir = join(dir, 'no-such-dir', 'run.h5');
    const err = await CaptureWriter.open(missingDir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptureError);
    expect(err).toMatchObject({ code: 'ERR_EPICSPERF_CAPTURE_UNWRITABLE' });
    expect((err as Error).message).toContain('no-such-dir');
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
    // a directory where the file should be
    await expect(CaptureWriter.open(dir, { force: true })).rejects.toMatchObject({ code: 'ERR_EPICSPERF_CAPTURE_UNWRITABLE' });
  });

  it('rejects bad use with CaptureError', async () => {
    const w = await CaptureWriter.open(join(dir, 'usage.h5'));
    const a = w.addPv('X', { nativeType: 'double', count: 3 });
    expect(() => w.addPv('X', { nativeType: 'double', count: 1 })).toThrow(/added twice/);
    expect(() => w.addPv('S', { nativeType: 'string' as never, count: 1 })).toThrow(/cannot be captured/);
    expect(() => w.addPv('Z', { nativeType: 'long', count: 0 })).toThrow(/positive integer/);
    expect(() => w.append(a, { value: [1, 2], timestamp: 0, received: 0, severity: 0, status: 0 })).toThrow(/varying/);
    expect(() => w.append(7, { value: 1, timestamp: 0, received: 0, severity: 0, status: 0 })).toThrow(/no PV/);
    w.close();
    expect(() => w.flush()).toThrow(CaptureError);
  });
});
