// Reads a capture file back in one JSON shape, independently with h5py (Python) and with h5wasm,
// so the tests compare both readers against what was written.
import * as h5wasm from 'h5wasm/node';
import { pythonJson } from 'epicsperf-testkit/python';

export interface DatasetDump {
  dtype: string;
  shape: number[];
  maxshape: (number | null)[];
  chunks: number[] | null;
  data: number[];
  attrs: Record<string, unknown>;
}

export interface CaptureDump {
  attrs: Record<string, unknown>;
  pvs: Record<string, { group: string; attrs: Record<string, unknown>; datasets: Record<string, DatasetDump> }>;
}

/** h5py: every attribute and dataset of the file; PVs keyed by their `name` attribute. */
const PY_DUMP = `
import json, sys, h5py, numpy as np
def conv(v):
    if isinstance(v, bytes): return v.decode()
    if isinstance(v, np.ndarray): return [conv(x) for x in v.tolist()]
    if isinstance(v, np.generic): return v.item()
    if isinstance(v, list): return [conv(x) for x in v]
    return v
def attrs(o): return {k: conv(o.attrs[k]) for k in o.attrs}
out = {}
with h5py.File(sys.argv[1], 'r') as f:
    out['attrs'] = attrs(f)
    out['pvs'] = {}
    for gname, g in f['pvs'].items():
        ds = {}
        for dname, d in g.items():
            ds[dname] = {'dtype': str(d.dtype), 'shape': list(d.shape), 'maxshape': list(d.maxshape),
                         'chunks': list(d.chunks) if d.chunks else None,
                         'data': [conv(x) for x in d[()].reshape(-1).tolist()], 'attrs': attrs(d)}
        out['pvs'][g.attrs['name']] = {'group': gname, 'attrs': attrs(g), 'datasets': ds}
print(json.dumps(out))
`;

export function dumpWithH5py(path: string): Promise<CaptureDump> {
  return pythonJson<CaptureDump>(PY_DUMP, [path], {});
}

const NUMPY: Record<string, string> = {
  '<B': 'uint8',
  '<b': 'int8',
  '<h': 'int16',
  '<H': 'uint16',
  '<i': 'int32',
  '<I': 'uint32',
  '<q': 'int64',
  '<Q': 'uint64',
  '<f': 'float32',
  '<d': 'float64',
};

function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, (x) => plain(x));
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

function attrsOf(o: { attrs: Record<string, { value: unknown }> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, a] of Object.entries(o.attrs)) out[k] = plain(a.value);
  return out;
}

/** The same dump with h5wasm (numpy dtype names, so it compares with the h5py dump). */
export async function dumpWithH5wasm(path: string): Promise<CaptureDump> {
  await h5wasm.ready;
  const f = new h5wasm.File(path, 'r');
  try {
    const out: CaptureDump = { attrs: attrsOf(f), pvs: {} };
    const pvs = f.get('pvs') as InstanceType<typeof h5wasm.Group>;
    for (const gname of pvs.keys()) {
      const g = pvs.get(gname) as InstanceType<typeof h5wasm.Group>;
      const datasets: Record<string, DatasetDump> = {};
      for (const dname of g.keys()) {
        const d = g.get(dname) as InstanceType<typeof h5wasm.Dataset>;
        const m = d.metadata;
        const shape = d.shape ?? [];
        const empty = shape.some((n) => n === 0);
        datasets[dname] = {
          dtype: NUMPY[String(d.dtype)] ?? String(d.dtype),
          shape,
          maxshape: (m.maxshape ?? []).map((n) => (n === null || Number(n) >= 2 ** 63 ? null : Number(n))),
          chunks: m.chunks ? m.chunks.map(Number) : null,
          data: empty ? [] : (plain(d.value) as number[]),
          attrs: attrsOf(d),
        };
      }
      const attrs = attrsOf(g);
      out.pvs[String(attrs.name)] = { group: gname, attrs, datasets };
    }
    return out;
  } finally {
    f.close();
  }
}
