// The built-in IOC served by this project's server (`server: 'node'`) against the same IOC on
// softioc (RSRV and QSRV): every PV read by pyepics (libca) over CA and by p4p (pvxs) over PV
// Access answers the same on both, field by field (value, type, count, alarm, display and control
// metadata, enum strings, normative type), timestamps and the counters' moving values aside. The
// behaviours the workloads rely on (puts clipped to the drive limits, a put completing late, the
// access gate, gaps, stats) behave alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaseTool, baseTools, runBaseTool } from 'epicsperf-testkit/base-tools';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { pythonJson } from 'epicsperf-testkit/python';
import { pyepicsRead, type PyReading } from 'epicsperf-testkit/client-helpers';
import { KINDS } from 'epicsperf-testkit/kinds';

const P = 'TEST:';
const options = { records: 3, rate: 10, arrayElements: 16, arrayRate: 2, latencyElements: 8, settings: 10, accessSecurity: true } as const;
const NAMES = [
  ...KINDS.map((k) => `${P}KIND:${k}`),
  ...Array.from({ length: 10 }, (_, i) => `${P}SET:${i + 1}`),
  ...['CALC1', 'CALC3', 'SKIP', 'RAMP', 'RAMP:RATE', 'ARRAY:SKIP', 'ARRAY:PUT', 'LATENCY:DOUBLE', 'LATENCY:CHAR'].map((n) => P + n),
  ...['SLOW', 'SLOW:DONE', 'GATE', 'GATED', 'LOCKED'].map((n) => `${P}KIND:${n}`),
];
/** PVs whose value moves on its own (compared without it). */
const MOVING = new Set([`${P}CALC1`, `${P}CALC3`]);

let c: Ioc;
let node: Ioc;

beforeAll(async () => {
  [c, node] = await Promise.all([startIoc(options), startIoc({ ...options, server: 'node' })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([c?.stop(), node?.stop()]);
});

const PY_P4P = String.raw`
import json, sys, math
from p4p.client.thread import Context
def plain(v):
    if hasattr(v, 'tolist'): v = v.tolist()
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v): return repr(v)
    return v
def tree(val):
    return {k: (tree(val[k]) if hasattr(val[k], 'keys') and hasattr(val[k], 'type') else plain(val[k])) for k in val.keys()}
ctx = Context('pva', nt=False)
out = {}
for name in json.loads(sys.argv[1]):
    try:
        v = ctx.get(name, timeout=5.0)
        out[name] = {'id': v.getID(), 'type': str(v.type()), 'value': tree(v)}
    except Exception as e:
        out[name] = {'error': str(e)}
ctx.close()
print(json.dumps(out))
`;

interface P4pAnswer {
  id?: string;
  type?: string;
  value?: Record<string, unknown>;
  error?: string;
}

function p4pAll(ioc: Ioc): Promise<Record<string, P4pAnswer>> {
  return pythonJson(PY_P4P, [JSON.stringify(NAMES)], {
    ...ioc.env,
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
  });
}

/** A reading without what differs between two servers by nature: the time, and a moving value. */
function still(name: string, r: Record<string, unknown>): Record<string, unknown> {
  const { timestamp: _t, timeStamp: _ts, ...rest } = r;
  if (!MOVING.has(name)) return rest;
  const { value: _v, ...fixed } = rest;
  return fixed;
}

describe('every PV reads the same from both servers', () => {
  let ca: [PyReading[], PyReading[]];
  let pva: [Record<string, P4pAnswer>, Record<string, P4pAnswer>];
  beforeAll(async () => {
    [ca, pva] = await Promise.all([
      Promise.all([pyepicsRead(c.env, NAMES), pyepicsRead(node.env, NAMES)]),
      Promise.all([p4pAll(c), p4pAll(node)]),
    ]);
  }, 120_000);

  it.each(NAMES)('%s over CA (pyepicsRead: type, count, value, alarm, ctrl metadata)', (name) => {
    const [want, got] = ca.map((rs) => rs.find((r) => r.name === name)!);
    expect(want!.ok, `softioc serves ${name}`).toBe(true);
    expect(still(name, got as unknown as Record<string, unknown>)).toEqual(still(name, want as unknown as Record<string, unknown>));
  });

  it.each(NAMES)('%s over PV Access (p4p: the normative type and every field)', (name) => {
    const [want, got] = pva.map((r) => r[name]!);
    expect(want!.error, `QSRV serves ${name}`).toBeUndefined();
    expect(got!.id).toBe(want!.id);
    expect(got!.type).toBe(want!.type);
    expect(still(name, got!.value!)).toEqual(still(name, want!.value!));
  });
});

describe("EPICS base's caget, caput, camonitor and cainfo answer the same from both servers", () => {
  let tools = '';
  beforeAll(async () => {
    tools = await baseTools();
  }, 120_000);

  /** A tool's output against `ioc`, found by address list; `killAfterMs` stops one that runs on (camonitor). */
  const run = (ioc: Ioc, tool: BaseTool, args: string[], killAfterMs?: number): Promise<string> =>
    runBaseTool(tools, tool, args, { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' }, killAfterMs);
  /** Both servers' outputs, without what differs by nature: times, the server's address, moving values. */
  async function both(tool: BaseTool, args: string[], killAfterMs?: number): Promise<[string, string]> {
    const outs = await Promise.all([c, node].map((ioc) => run(ioc, tool, args, killAfterMs)));
    const mask = (o: string) =>
      o
        .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+/g, 'TIME')
        .replace(/(Timestamp:\s+).*/g, '$1TIME')
        .replace(/(Host:\s+).*/g, '$1HOST')
        .replace(new RegExp(`^(\\S*(?:${[...MOVING].join('|')})\\S*\\s+(?:TIME )?).*$`, 'gm'), '$1MOVING')
        .replace(new RegExp(`((?:${[...MOVING].join('|')})\\n(?:.*\\n)*?\\s+Value:\\s+).*`, 'g'), '$1MOVING');
    return [mask(outs[0]!), mask(outs[1]!)];
  }

  it('cainfo of every PV: type, count, access', async () => {
    const [want, got] = await both('cainfo', NAMES);
    expect(want).toMatch(/Native data type: DBF_DOUBLE/);
    expect(want).not.toMatch(/not found|timed out/i);
    expect(got).toBe(want);
  });

  it('caget of every PV in its CTRL form (value, alarm, units, precision, limits, enum strings), and with time and alarm (-a)', async () => {
    const info = await run(c, 'cainfo', NAMES);
    const native = new Map<string, string[]>();
    for (const m of info.matchAll(/^(\S+)\n(?:.*\n)*?\s+Native data type: DBF_(\w+)/gm)) {
      const list = native.get(m[2]!) ?? [];
      list.push(m[1]!);
      native.set(m[2]!, list);
    }
    expect([...native.values()].flat().sort()).toEqual([...NAMES].sort());
    for (const [type, names] of native) {
      const [want, got] = await both('caget', ['-d', `DBR_CTRL_${type}`, ...names]);
      expect(got, type).toBe(want);
    }
    const [want, got] = await both('caget', ['-a', ...NAMES]);
    expect(got).toBe(want);
  });

  it('caput with completion (-c) prints the old and new value alike; camonitor gets the same first update, then the counter ticking', async () => {
    const name = `${P}SET:1`;
    const [before] = await both('caget', ['-t', name]);
    const [want, got] = await both('caput', ['-c', '-w', '5', name, '7']);
    expect(want).toMatch(/New : .* 7\b/);
    expect(got).toBe(want);
    await both('caput', ['-c', name, before.trim()]);
    const [m0, m1] = await both('camonitor', [name], 1000);
    expect(m0.trim().split('\n')).toHaveLength(1);
    expect(m1).toBe(m0);
    const ticks = await Promise.all([c, node].map((ioc) => run(ioc, 'camonitor', [`${P}CALC1`], 1500)));
    for (const t of ticks) expect(t.trim().split('\n').length).toBeGreaterThan(5);
  });
});

const PY_PUTS = String.raw`
import json, sys, time
from epics import ca
P = sys.argv[1]
def chan(n):
    ch = ca.create_channel(P + n, connect=False, auto_cb=False)
    assert ca.connect_channel(ch, timeout=5.0), n
    return ch
out = {}
long_ = chan('KIND:LONG')
ca.put(long_, 5000, wait=True)
out['clipped'] = ca.get(long_)
ca.put(long_, 85, wait=True)
out['alarm'] = [ca.get_with_metadata(long_, ftype=ca.promote_type(long_, use_time=True))[k] for k in ('value', 'severity', 'status')]
ca.put(long_, 42, wait=True)
gate, gated = chan('KIND:GATE'), chan('KIND:GATED')
out['gated_open'] = bool(ca.write_access(gated))
ca.put(gate, 0, wait=True)
time.sleep(0.5)
out['gated_closed'] = bool(ca.write_access(gated))
ca.put(gate, 1, wait=True)
time.sleep(0.5)
out['gated_again'] = bool(ca.write_access(gated))
out['locked'] = bool(ca.write_access(chan('KIND:LOCKED')))
slow = chan('KIND:SLOW')
t = time.monotonic()
ca.put(slow, 2.5, wait=True, timeout=10)
out['slow_s'] = round(time.monotonic() - t)
out['slow'] = ca.get(slow)
out['slow_done'] = ca.get(chan('KIND:SLOW:DONE'))
print(json.dumps(out))
`;

describe('puts behave alike', () => {
  it('clipped to the drive limits, alarms from the alarm limits, the access gate, a put completing 3 s late', async () => {
    const run = (ioc: Ioc) =>
      pythonJson<Record<string, unknown>>(PY_PUTS, [P], { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' });
    const [want, got] = await Promise.all([run(c), run(node)]);
    expect(want).toMatchObject({
      clipped: 1000,
      alarm: [85, 1, 4],
      gated_open: true,
      gated_closed: false,
      gated_again: true,
      locked: false,
      slow_s: 3,
    });
    expect(got).toEqual(want);
  }, 60_000);
});

describe('what the workloads read of the IOC', () => {
  it.each(['softioc', 'node'])(
    '%s: stats count the ticks; a put to SKIP adds that many to every counter at the next tick',
    async (server) => {
      const ioc = server === 'node' ? node : c;
      const s = await ioc.stats();
      expect(s.ticks).toBeGreaterThan(0);
      // A counter counts from 1 at start, one per tick.
      expect(s.counterValue! - s.ticks!).toBeGreaterThanOrEqual(0);
      expect(s.counterValue! - s.ticks!).toBeLessThanOrEqual(2);
      // The same lead in two stats replies in a row.
      const settledLead = async (): Promise<number> => {
        let last = Number.NaN;
        for (let i = 0; i < 50; i++) {
          const x = await ioc.stats();
          const d = x.counterValue! - x.ticks!;
          if (d === last) return d;
          last = d;
          await new Promise((r) => setTimeout(r, 37));
        }
        throw new Error('the counters never kept one lead over the ticks');
      };
      const lead = await settledLead();
      await pythonJson(
        String.raw`
import sys
from epics import ca
ch = ca.create_channel(sys.argv[1], connect=False, auto_cb=False)
assert ca.connect_channel(ch, timeout=5.0)
ca.put(ch, 100, wait=True)
print('{}')
`,
        [`${P}SKIP`],
        { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' },
      );
      // The counters' lead over the ticks, by the time it settles: softioc's counters are processed
      // after the tick is counted, on EPICS's own thread, so one stats reply may catch them a tick
      // behind (or its tick count a tick ahead).
      await expect.poll(async () => (await settledLead()) - lead, { timeout: 10_000, interval: 100 }).toBe(100);
      expect((await ioc.stats()).arrayUpdates).toBeGreaterThan(0);
    },
    30_000,
  );
});
