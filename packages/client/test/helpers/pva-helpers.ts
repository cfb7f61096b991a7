// Shared helpers of the PV Access client tests: a PVA Context on an IOC's environment (loopback
// only) and independent readings with p4p from the managed Python environment.
import { pythonJson } from 'epicsperf-testkit/python';
import { Context } from '../../src/index.js';

export function pvaEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, EPICS_PVA_ADDR_LIST: '127.0.0.1', EPICS_PVA_AUTO_ADDR_LIST: 'NO' };
}

export function pvaContextFor(env: Readonly<Record<string, string>>): Context<'pva'> {
  return new Context({ env: pvaEnv(env), protocol: 'pva' });
}

/** JSON of a p4p Value (64-bit integers past 2^53 as strings): numpy arrays as lists, 64-bit integers as strings, non-finite floats by name. */
export const PY_PLAIN = String.raw`
import json, math
def plain(v):
    if hasattr(v, 'tolist'): v = v.tolist()
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v): return repr(v)
    if isinstance(v, bytes): return list(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53: return str(v)
    return v
def value_dict(val):
    out = {}
    for k in val.keys():
        x = val[k]
        out[k] = value_dict(x) if hasattr(x, 'keys') and hasattr(x, 'type') else plain(x)
    return out
`;

const PY_GET =
  PY_PLAIN +
  String.raw`
import sys
from p4p.client.thread import Context
ctx = Context('pva', nt=False)
out = []
request = sys.argv[2] if len(sys.argv) > 2 else None
for name in json.loads(sys.argv[1]):
    try:
        v = ctx.get(name, request=request, timeout=5.0)
        out.append({'name': name, 'ok': True, 'id': v.getID(), 'value': value_dict(v)})
    except Exception as e:
        out.append({'name': name, 'ok': False, 'error': str(e)})
ctx.close()
print(json.dumps(out))
`;

export interface P4pReading {
  name: string;
  ok: boolean;
  id?: string;
  value?: Record<string, unknown>;
  error?: string;
}

/** Read PVs with p4p (pvxs) against the same server (with a pvRequest string): the whole structure as plain JSON. */
export function p4pRead(env: Readonly<Record<string, string>>, names: string[], request?: string): Promise<P4pReading[]> {
  return pythonJson<P4pReading[]>(PY_GET, request === undefined ? [JSON.stringify(names)] : [JSON.stringify(names), request], pvaEnv(env));
}

/** Our value in the shape PY_PLAIN gives: typed arrays as lists, bigints as numbers, non-finite floats by name. */
export function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, plain);
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/**
 * Field by field: ours has every field p4p has, with the same value (the type's default where
 * the server sent nothing), and no other. `expect` is vitest's.
 */
export function expectSame(
  expect: (v: unknown, msg?: string) => { toBe(x: unknown): void; toEqual(x: unknown): void },
  ours: Record<string, unknown>,
  theirs: Record<string, unknown>,
  path: string,
): void {
  for (const [k, t] of Object.entries(theirs)) {
    const o = ours[k];
    expect(o !== undefined, `${path}.${k} is missing, p4p has ${JSON.stringify(t)}`).toBe(true);
    if (typeof t === 'object' && t !== null && !Array.isArray(t))
      expectSame(expect, o as Record<string, unknown>, t as Record<string, unknown>, `${path}.${k}`);
    else expect(o, `${path}.${k}`).toEqual(t);
  }
  for (const k of Object.keys(ours)) expect(k in theirs, `${path}.${k} is not in p4p's value`).toBe(true);
}
