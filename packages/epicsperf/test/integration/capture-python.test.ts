// docs/capture-format.md is enough to write a capture from Python: h5py, following the page,
// writes the same PVs as CaptureWriter, and both files have the same structure and contents.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CaptureWriter } from '../../src/capture/writer.js';
import { dumpWithH5py, dumpWithH5wasm } from '../helpers/capture.js';
import { pythonJson } from 'epicsperf-testkit/python';

const dir = mkdtempSync(join(tmpdir(), 'epicsperf-capture-py-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The page's Python example, with data.
const PY_WRITER = `
import json, sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'w-', libver=('v108', 'v108'))
f.attrs.update(format='epicsperf-capture', format_version=np.uint32(1), tool='epicsperf',
               tool_version='0.1.0', created='2026-01-30T12:00:00.000Z',
               options=json.dumps({'flushMs': 1000}, separators=(',', ':')), environment=json.dumps({}))
pvs = f.create_group('pvs')
def add_pv(index, name, native_type, count, dtype, units=None, precision=None, enum_strings=None):
    g = pvs.create_group(name.replace('%', '%25').replace('/', '%2F') if name != '.' else '%2E')
    g.attrs.update(name=name, index=np.uint32(index), native_type=native_type,
                   count=np.uint32(count), layout='scalar' if count == 1 else 'fixed')
    if units is not None: g.attrs['units'] = units
    if precision is not None: g.attrs['precision'] = np.int16(precision)
    if enum_strings: g.attrs['enum_strings'] = enum_strings
    if count == 1:
        g.create_dataset('value', (0,), dtype, maxshape=(None,), chunks=(1024,))
    else:
        r = max(1, min(1024, 524288 // (count * np.dtype(dtype).itemsize)))
        g.create_dataset('value', (0, count), dtype, maxshape=(None, count), chunks=(r, count))
    for n, t in (('timestamp', 'f8'), ('received', 'f8'), ('severity', 'u1'), ('status', 'u2')):
        g.create_dataset(n, (0,), t, maxshape=(None,), chunks=(1024,))
    g.create_dataset('gaps', (0, 4), 'f8', maxshape=(None, 4), chunks=(256, 4))
    g['gaps'].attrs['columns'] = ['index', 'before', 'after', 'lost']
    return g
def append_block(ds, rows):
    n = ds.shape[0]
    ds.resize(n + len(rows), axis=0)
    ds[n:] = rows
a = add_pv(0, 'TEST:CALC1', 'double', 1, 'f8', units='counts', precision=0)
b = add_pv(1, 'TEST:KIND:ENUM', 'enum', 1, 'u2', enum_strings=['Off', 'On'])
c = add_pv(2, 'A/B', 'short', 3, 'i2')
append_block(a['value'], [1, 2, 4]); append_block(a['gaps'], [[2, 2, 4, 1]])
append_block(b['value'], [1, 0, 1])
append_block(c['value'], [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
for g in (a, b, c):
    append_block(g['timestamp'], [1e9, 1e9 + 1, 1e9 + 2]); append_block(g['received'], [2e9, 2e9 + 1, 2e9 + 2])
    append_block(g['severity'], [0, 1, 2]); append_block(g['status'], [0, 3, 4])
f.flush()
f.close()
print('{}')
`;

it('a file written from Python by the format page equals the one CaptureWriter writes', async () => {
  const node = join(dir, 'node.h5');
  const py = join(dir, 'python.h5');
  const w = await CaptureWriter.open(node, { toolVersion: '0.1.0', options: { flushMs: 1000 }, environment: {} });
  const a = w.addPv('TEST:CALC1', { nativeType: 'double', count: 1, units: 'counts', precision: 0 });
  const b = w.addPv('TEST:KIND:ENUM', { nativeType: 'enum', count: 1, enumStrings: ['Off', 'On'] });
  const c = w.addPv('A/B', { nativeType: 'short', count: 3 });
  const values = [
    [1, 2, 4],
    [1, 0, 1],
    [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ],
  ] as const;
  [a, b, c].forEach((pv, i) => {
    for (let k = 0; k < 3; k++) {
      w.append(pv, { value: values[i]![k]!, timestamp: 1e9 + k, received: 2e9 + k, severity: k, status: [0, 3, 4][k]! });
    }
  });
  w.appendGap(a, { index: 2, before: 2, after: 4, lost: 1 });
  w.close();
  await pythonJson(PY_WRITER, [py], {});

  const fromNode = await dumpWithH5py(node);
  const fromPython = await dumpWithH5py(py);
  delete fromNode.attrs.created;
  delete fromPython.attrs.created;
  expect(fromPython).toEqual(fromNode);
  // and h5wasm reads the Python file the same way
  const wasm = await dumpWithH5wasm(py);
  delete wasm.attrs.created;
  expect(wasm).toEqual(fromNode);
});
