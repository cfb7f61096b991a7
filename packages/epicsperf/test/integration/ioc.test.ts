// The built-in IOC, checked with an independent real client (pyepics) and through the CLI.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { freePort } from '../../src/ioc/ports.js';
import { alive, pythonJson, waitGone } from 'epicsperf-testkit/python';
import { BIN, runCli } from 'epicsperf-testkit/cli';
import { KINDS } from 'epicsperf-testkit/kinds';

// Waiting with callbacks the way pyepics asks: poll, not sleep. A PV counts as connected
// before its connection callback (on libca's thread) has made the subscription, and libca sends
// a request made on its callback thread only at the next flush from another thread: with
// time.sleep() instead, the last PV to connect got no update at all in about one run in ten.
const POLL_FOR = `
def poll_for(seconds):
    end = time.time() + seconds
    while time.time() < end:
        epics.poll(evt=1.e-3, iot=0.1)
`;

const MONITOR = `
import json, sys, time, epics
${POLL_FOR}
names = sys.argv[1].split(',')
seen = {n: [] for n in names}
def cb(pvname=None, value=None, severity=None, status=None, timestamp=None, **kw):
    seen[pvname].append([value, severity, status, timestamp, time.time()])
pvs = [epics.PV(n, callback=cb, form='time') for n in names]
for p in pvs: p.wait_for_connection(5)
poll_for(float(sys.argv[2]))
for p in pvs: p.clear_callbacks()
print(json.dumps(seen))
`;

const READ_ALL = `
import json, sys, math, epics
out = {}
for n in sys.argv[1].split(','):
    pv = epics.PV(n, auto_monitor=False, form='ctrl')
    if not pv.wait_for_connection(5):
        out[n] = None; continue
    v = pv.get(timeout=5, as_string=n.endswith('LONGSTRING'), use_monitor=False)
    if hasattr(v, 'tolist'): v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v): v = repr(v)
    out[n] = {'type': pv.type, 'count': pv.count, 'value': v, 'severity': pv.severity,
              'enum_strs': list(pv.enum_strs or []), 'units': pv.units, 'precision': pv.precision}
print(json.dumps(out))
`;

type Sample = [number, number, number, number, number];

describe('built-in IOC', () => {
  let ioc: Ioc;
  const pids: number[] = [];

  beforeAll(async () => {
    ioc = await startIoc({ records: 20, rate: 10, arrayElements: 1000, arrayRate: 2 });
    pids.push(ioc.pid);
  });
  afterAll(async () => {
    await ioc?.stop();
    for (const pid of pids) expect(await waitGone(pid, 5000)).toBe(true);
  });

  it('prints the client environment on loopback with its own ports', () => {
    expect(ioc.env.EPICS_CA_ADDR_LIST).toBe('127.0.0.1');
    expect(ioc.env.EPICS_CA_AUTO_ADDR_LIST).toBe('NO');
    expect(Number(ioc.env.EPICS_CA_SERVER_PORT)).toBe(ioc.caPort);
    expect(Number(ioc.env.EPICS_PVA_SERVER_PORT)).toBe(ioc.pvaPort);
    expect(Number(ioc.env.EPICS_CA_MAX_ARRAY_BYTES)).toBeGreaterThanOrEqual(8000);
    expect(ioc.counterNames()).toHaveLength(20);
    expect(ioc.counterNames()[0]).toBe('TEST:CALC1');
  });

  it('counters step by exactly 1 at the asked rate, in MINOR alarm', async () => {
    const names = ['TEST:CALC1', 'TEST:CALC7', 'TEST:CALC20'];
    const seen = await pythonJson<Record<string, Sample[]>>(MONITOR, [names.join(','), '2.2'], ioc.env);
    for (const n of names) {
      const s = seen[n]!;
      // the initial value, then updates at 10 Hz for 2.2 s
      expect(s.length).toBeGreaterThanOrEqual(19);
      expect(s.length).toBeLessThanOrEqual(26);
      for (let i = 1; i < s.length; i++) {
        expect(s[i]![0] - s[i - 1]![0]).toBe(1);
        expect(s[i]![3]).toBeGreaterThan(s[i - 1]![3]);
      }
      const updates = s.slice(1);
      const span = updates[updates.length - 1]![3] - updates[0]![3];
      const rate = (updates.length - 1) / span;
      expect(rate).toBeGreaterThan(9);
      expect(rate).toBeLessThan(11);
      for (const [, severity, status] of updates) {
        expect(severity).toBe(1); // MINOR
        expect(status).toBe(4); // HIGH
      }
    }
  });

  it('serves each correctness PV with the right native type and value', async () => {
    const K = 'TEST:KIND:';
    const names = KINDS.map((n) => K + n);
    const r = await pythonJson<
      Record<
        string,
        { type: string; count: number; value: unknown; severity: number; enum_strs: string[]; units: string; precision: number } | null
      >
    >(READ_ALL, [names.join(',')], ioc.env);
    const get = (n: string) => {
      const v = r[K + n];
      expect(v, n).not.toBeNull();
      return v!;
    };
    expect(get('STRING')).toMatchObject({ type: 'time_string', value: 'hello epics' }); // pyepics has no ctrl form for strings
    expect(get('SHORT')).toMatchObject({ type: 'ctrl_short', count: 1, value: -1234, units: 'cnt' });
    expect(get('FLOAT')).toMatchObject({ type: 'ctrl_float', value: 1.5, units: 'V', precision: 2 });
    expect(get('ENUM')).toMatchObject({ type: 'ctrl_enum', value: 1, enum_strs: ['Off', 'On', 'Fault'] });
    expect(get('CHAR')).toMatchObject({ type: 'ctrl_char', value: 200 });
    expect(get('LONG')).toMatchObject({ type: 'ctrl_long', value: 42, units: 'counts' });
    expect(get('DOUBLE')).toMatchObject({ type: 'ctrl_double', value: 3.14159, units: 'mm', precision: 4 });
    expect(get('LONGSTRING').value).toMatch(/^A long string held in a char waveform/);
    expect((get('LONGSTRING').value as string).length).toBeGreaterThan(40);
    expect(get('ARR:CHAR')).toMatchObject({ type: 'ctrl_char', count: 10, value: [0, 25, 50, 75, 100, 125, 150, 175, 200, 225] });
    expect(get('ARR:SHORT').value).toEqual([0, -300, -600, -900, -1200, -1500, -1800, -2100, -2400, -2700]);
    expect(get('ARR:LONG').value).toEqual([0, 1e5, 2e5, 3e5, 4e5, 5e5, 6e5, 7e5, 8e5, 9e5]);
    expect(get('ARR:FLOAT')).toMatchObject({ type: 'ctrl_float', value: [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5] });
    expect(get('ARR:DOUBLE').value).toEqual([0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25]);
    expect(get('DYN').count).toBe(100);
    expect(get('NAN').value).toBe('nan');
    expect(get('INF').value).toBe('inf');
    expect(get('NINF').value).toBe('-inf');
    expect(get('LONGMAX').value).toBe(2147483647);
    expect(get('LONGMIN').value).toBe(-2147483648);
    expect(get('SHORTMAX').value).toBe(32767);
    expect(get('SHORTMIN').value).toBe(-32768);
    expect(get('CHARMAX').value).toBe(255);
    expect(get('EMPTY')).toMatchObject({ type: 'time_string', value: '' });
    expect(get('STR39').value).toBe('0123456789abcdefghijklmnopqrstuvwxyzABC');
  });

  it('refreshes PREFIX:ARRAY with every element equal to the update number', async () => {
    const script = `
import json, sys, time, epics
${POLL_FOR}
got = []
def cb(value=None, **kw): got.append([float(value.min()), float(value.max()), len(value)])
pv = epics.PV('TEST:ARRAY', callback=cb)
pv.wait_for_connection(5); poll_for(1.6); pv.clear_callbacks()
print(json.dumps(got))`;
    const got = await pythonJson<[number, number, number][]>(script, [], ioc.env);
    expect(got.length).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < got.length; i++) {
      const [min, max, len] = got[i]!;
      expect(len).toBe(1000);
      expect(min).toBe(max);
      if (i > 0) expect(min - got[i - 1]![0]).toBe(1);
    }
  });

  it('serves PV Access too (QSRV)', async () => {
    const script = `
import json, sys
from p4p.client.thread import Context
ctx = Context('pva')
v = ctx.get('TEST:KIND:LONG', timeout=5)
print(json.dumps({'value': int(v), 'severity': v.severity}))
ctx.close()`;
    expect(await pythonJson(script, [], ioc.env)).toEqual({ value: 42, severity: 0 });
  });

  it('starts a second IOC at the same time without a clash', async () => {
    const other = await startIoc({ records: 5, prefix: 'OTHER:', arrayElements: 0 });
    pids.push(other.pid);
    try {
      expect(other.caPort).not.toBe(ioc.caPort);
      expect(other.pvaPort).not.toBe(ioc.pvaPort);
      const script = `
import json, sys, epics
print(json.dumps([epics.caget(n, timeout=1.5) for n in sys.argv[1].split(',')]))`;
      expect(await pythonJson(script, ['OTHER:KIND:LONG,TEST:KIND:LONG'], other.env)).toEqual([42, null]);
      expect(await pythonJson(script, ['TEST:KIND:LONG,OTHER:KIND:LONG'], ioc.env)).toEqual([42, null]);
    } finally {
      await other.stop();
    }
  });

  it('names counters CALC00000.. with the padded style', async () => {
    const padded = await startIoc({ records: 3, nameStyle: 'padded', arrayElements: 0 });
    pids.push(padded.pid);
    try {
      expect(padded.counterNames()).toEqual(['TEST:CALC00000', 'TEST:CALC00001', 'TEST:CALC00002']);
      const script = `
import json, sys, epics
print(json.dumps([epics.caget(n, timeout=1.5) is not None for n in sys.argv[1].split(',')]))`;
      expect(await pythonJson(script, ['TEST:CALC00000,TEST:CALC00002,TEST:CALC00003'], padded.env)).toEqual([true, true, false]);
    } finally {
      await padded.stop();
    }
  });

  it('refuses a busy explicit port', async () => {
    await expect(startIoc({ caPort: ioc.caPort, arrayElements: 0 })).rejects.toThrow(/port .* is busy/);
  });

  it('dies with its parent when the parent is killed outright', async () => {
    const code = `
import('${new URL('../../dist/ioc/index.js', import.meta.url).href}').then(async (m) => {
  const ioc = await m.startIoc({ records: 3, arrayElements: 0 });
  process.stdout.write(ioc.pid + '\\n');
  setInterval(() => {}, 1000);
});`;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      parent.once('exit', () => reject(new Error('parent exited early')));
    });
    pids.push(pid);
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await waitGone(pid, 5000)).toBe(true);
  });
});

describe('built-in IOC started again', () => {
  it('with the same server ports serves the same environment (broadcast and repeater ports follow them)', async () => {
    const caPort = await freePort({ tcp: true, udp: true });
    const pvaPort = await freePort({ tcp: true, udp: true }, new Set([caPort, caPort + 1, caPort - 1]));
    const envs: Record<string, string>[] = [];
    for (let k = 0; k < 2; k++) {
      const ioc = await startIoc({ records: 1, arrayElements: 0, caPort, pvaPort });
      envs.push({ ...ioc.env });
      await ioc.stop();
    }
    expect(envs[1]).toEqual(envs[0]);
    expect(envs[0]!.EPICS_PVA_BROADCAST_PORT).toBe(String(pvaPort + 1));
    expect(envs[0]!.EPICS_CA_REPEATER_PORT).toBe(String(caPort + 1));
  });

  it('on ports it picked, then again with those server ports, serves the same environment', async () => {
    // A client keeps the environment of the first start: the restarted IOC must answer PVA
    // searches and send beacons on the same broadcast and repeater ports.
    const first = await startIoc({ records: 1, arrayElements: 0 });
    const env0 = { ...first.env };
    await first.stop();
    const again = await startIoc({ records: 1, arrayElements: 0, caPort: first.caPort, pvaPort: first.pvaPort });
    const env1 = { ...again.env };
    await again.stop();
    expect(env1).toEqual(env0);
    expect(env0.EPICS_PVA_BROADCAST_PORT).toBe(String(first.pvaPort + 1));
    expect(env0.EPICS_CA_REPEATER_PORT).toBe(String(first.caPort + 1));
  });
});

describe('epicsperf ioc (CLI)', () => {
  it('prints the environment and ready, and stops on SIGINT leaving nothing running', async () => {
    const child = spawn(process.execPath, [BIN, 'ioc', '--records', '3', '--array-elements', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready\n')) resolve();
      });
      child.once('exit', (c) => reject(new Error(`exited ${c}`)));
    });
    const lines = out.trim().split('\n');
    expect(lines[lines.length - 1]).toBe('ready');
    const env = Object.fromEntries(lines.slice(0, -1).map((l) => l.split('=') as [string, string]));
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'EPICS_CA_ADDR_LIST',
        'EPICS_CA_AUTO_ADDR_LIST',
        'EPICS_CA_SERVER_PORT',
        'EPICS_CA_MAX_ARRAY_BYTES',
        'EPICS_PVA_ADDR_LIST',
        'EPICS_PVA_SERVER_PORT',
      ]),
    );
    const value = await pythonJson(`import json, epics; print(json.dumps(epics.caget('TEST:KIND:LONG', timeout=3)))`, [], env);
    expect(value).toBe(42);
    // Its children: the IOC, and the CA repeater its startup read started (which stays a minute
    // after its last client, as caRepeater stays).
    const children = await childPids(child.pid!);
    const iocPids = children.filter((pid) => commandOf(pid).includes('epicsperf_runners.ioc'));
    expect(iocPids.length).toBe(1);
    expect(children.filter((pid) => !iocPids.includes(pid)).map(commandOf)).toEqual(children.length > 1 ? ['ca-repeater'] : []);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    for (const pid of iocPids) expect(await waitGone(pid, 5000)).toBe(true);
  });

  it.each([
    [['ioc', '--records', '0'], /--records.*invalid/],
    [['ioc', '--records', 'abc'], /--records.*invalid/],
    [['ioc', '--rate', '-1'], /--rate.*invalid/],
    [['ioc', '--bogus'], /unknown option '--bogus'/],
    [['ioc', '--listen', 'eth0'], /--listen.*expected an IPv4 address/],
    [['ioc', '--name-style', 'weird'], /option '--name-style <style>' argument 'weird' is invalid\. Allowed choices are plain, padded/],
  ])('rejects bad input %j with one line and exit 2', async (args, re) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(re);
  });

  it('says what to do when the Python interpreter is missing', async () => {
    const r = await runCli(['ioc', '--records', '3'], { env: { EPICSPERF_PYTHON: '/nonexistent/python3' } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/EPICSPERF_PYTHON=\/nonexistent\/python3 does not exist/);
  });

  it('a busy port given explicitly is a one-line error and leaves nothing running', async () => {
    const ioc = await startIoc({ records: 2, arrayElements: 0 });
    try {
      const r = await runCli(['ioc', '--ca-port', String(ioc.caPort)]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`CA port ${ioc.caPort} is busy`));
    } finally {
      await ioc.stop();
    }
  });
});

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

async function childPids(pid: number): Promise<number[]> {
  const { readFileSync } = await import('node:fs');
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
