// Shared helpers of the client tests: a Context on an IOC's environment (loopback only), and
// an independent reading of PVs with pyepics (libca) from the managed Python environment.
import { pythonJson } from './python.js';
import { Context, type ContextOptions } from 'epics-client';

export { waitFor } from './wait.js';

/** Options that point a Context at an IOC's environment, never beyond 127.0.0.1. */
export function loopbackOptions(env: Readonly<Record<string, string>>, extra: ContextOptions = {}): ContextOptions {
  return { env: { ...env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' }, ...extra };
}

export function contextFor(env: Readonly<Record<string, string>>, extra: ContextOptions = {}): Context {
  return new Context(loopbackOptions(env, extra));
}

/**
 * Open or close the built-in IOC's access-security gate (`<kind>GATE`) and wait until the CA
 * channel of `<kind>GATED` says so: the IOC re-evaluates the rule when its INPA link posts the
 * gate, after the put of the gate has completed, and tells CA clients later still.
 */
export async function setGate(ctx: Context, kind: string, open: boolean): Promise<void> {
  await ctx.put(kind + 'GATE', open ? 1 : 0);
  for (const end = Date.now() + 5000; (await ctx.info(kind + 'GATED')).writeAccess !== open; ) {
    if (Date.now() > end) throw new Error(`${kind}GATED not ${open ? 'writable' : 'read-only'} 5 s after ${kind}GATE=${open ? 1 : 0}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface PyReading {
  name: string;
  ok: boolean;
  type?: string;
  count?: number;
  value?: unknown;
  char_value?: string;
  severity?: number;
  status?: number;
  timestamp?: number;
  units?: string;
  precision?: number;
  enum_strs?: string[];
  upper_disp_limit?: number;
  lower_disp_limit?: number;
  upper_ctrl_limit?: number;
  lower_ctrl_limit?: number;
  upper_alarm_limit?: number;
  lower_alarm_limit?: number;
}

const PY_READ = String.raw`
import json, sys, math
from epics import ca
def clean(v):
    if hasattr(v, 'tolist'): v = v.tolist()
    if isinstance(v, bytes): v = v.decode('utf-8', 'replace')
    if isinstance(v, float) and not math.isfinite(v): return repr(v)
    if isinstance(v, list): return [clean(x) for x in v]
    return v
out = []
for name in json.loads(sys.argv[1]):
    chid = ca.create_channel(name, connect=False, auto_cb=False)
    if not ca.connect_channel(chid, timeout=5.0):
        out.append({'name': name, 'ok': False}); continue
    r = {'name': name, 'ok': True, 'type': ca.field_type(chid), 'count': ca.element_count(chid)}
    t = ca.get_with_metadata(chid, ftype=ca.promote_type(chid, use_time=True), count=0)
    r['value'] = clean(t['value']); r['severity'] = t['severity']; r['status'] = t['status']; r['timestamp'] = t['timestamp']
    c = ca.get_with_metadata(chid, ftype=ca.promote_type(chid, use_ctrl=True))
    for k in ('units', 'precision', 'enum_strs', 'upper_disp_limit', 'lower_disp_limit', 'upper_ctrl_limit',
              'lower_ctrl_limit', 'upper_alarm_limit', 'lower_alarm_limit'):
        if k in c and c[k] is not None: r[k] = clean(c[k])
    if ca.field_type(chid) == 4 and ca.element_count(chid) > 1:
        r['char_value'] = ca.get(chid, as_string=True)
    out.append(r)
print(json.dumps(out))
`;

/** Read PVs with pyepics (libca) against the same IOC: value (count 0), alarm, timestamp, ctrl metadata. */
export function pyepicsRead(env: Readonly<Record<string, string>>, names: string[]): Promise<PyReading[]> {
  return pythonJson<PyReading[]>(PY_READ, [JSON.stringify(names)], {
    ...env,
    EPICS_CA_ADDR_LIST: '127.0.0.1',
    EPICS_CA_AUTO_ADDR_LIST: 'NO',
  });
}
