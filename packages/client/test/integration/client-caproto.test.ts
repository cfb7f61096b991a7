// The client against an independent server, caproto (epicsperf_runners.caproto_ioc): values, types,
// metadata and monitors cross-checked with pyepics reading the same server.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePythonEnv, pythonModule, freePort } from 'epicsperf-testkit/ioc';
import type { Context, Reading } from '../../src/index.js';
import { contextFor, pyepicsRead, waitFor } from 'epicsperf-testkit/client-helpers';

let child: ChildProcess | undefined;
let env: Record<string, string>;
let ctx: Context;

beforeAll(async () => {
  const python = await ensurePythonEnv();
  const port = await freePort({ tcp: true, udp: true });
  const repeater = await freePort({ tcp: false, udp: true });
  env = {
    EPICS_CA_SERVER_PORT: String(port),
    EPICS_CA_REPEATER_PORT: String(repeater),
    EPICS_CA_ADDR_LIST: '127.0.0.1',
    EPICS_CA_AUTO_ADDR_LIST: 'NO',
  };
  const module = pythonModule('caproto_ioc');
  child = spawn(python, [...module.args, 'CP:'], {
    env: { ...process.env, ...env, ...module.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', () => {});
  await waitFor(() => out.includes('ready'), 20_000, 'the caproto IOC');
  ctx = contextFor(env);
});

afterAll(async () => {
  await ctx?.close();
  if (child && child.exitCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
});

describe('caproto server', () => {
  const names = ['DOUBLE', 'LONG', 'STRING', 'ENUM', 'ARR', 'CHARS'].map((n) => `CP:${n}`);

  it('values, native types, alarm and timestamps match pyepics', async () => {
    const py = await pyepicsRead(env, names);
    for (const ref of py) {
      expect(ref.ok).toBe(true);
      const r = await ctx.get(ref.name, { timeout: 3000 });
      expect(r.dbrType - 14).toBe(ref.type);
      const v = ArrayBuffer.isView(r.value) ? Array.from(r.value as Float64Array) : r.value;
      expect(v).toEqual(ref.value);
      expect([r.severity, r.status]).toEqual([ref.severity, ref.status]);
      expect(Math.abs(r.posixSeconds - ref.timestamp!)).toBeLessThan(2e-6);
    }
  });

  it('metadata: units, precision, limits, enum strings; a char array as a long string', async () => {
    const [d, e, c] = await Promise.all([
      ctx.get('CP:DOUBLE', { form: 'ctrl' }),
      ctx.get('CP:ENUM', { form: 'ctrl' }),
      ctx.get('CP:CHARS', { longString: true }),
    ]);
    expect(d.metadata).toMatchObject({ units: 'mm', precision: 3, upperControlLimit: 100, lowerControlLimit: -100, upperDisplayLimit: 10 });
    expect(e.metadata?.enumStrings).toEqual(['Off', 'On', 'Fault']);
    const py = (await pyepicsRead(env, ['CP:CHARS']))[0]!;
    expect(c.value).toBe(py.char_value);
  });

  it('put then get, and a monitor on a counter that steps by 1', async () => {
    await ctx.put('CP:DOUBLE', -2.5);
    expect((await ctx.get('CP:DOUBLE')).value).toBe(-2.5);
    await ctx.put('CP:ENUM', 'Fault');
    expect((await ctx.get('CP:ENUM', { type: 'string' })).value).toBe('Fault');
    const ups: number[] = [];
    const m = ctx.monitor('CP:COUNTER', {}, (ev) => ev.kind === 'update' && ups.push((ev as Reading).value as number));
    await waitFor(() => ups.length >= 4, 5000, 'counter updates');
    m.close();
    for (let i = 1; i < ups.length; i++) expect(ups[i]).toBe(ups[i - 1]! + 1);
  });
});
