// The PV Access client against a pvxs server started by p4p, for what QSRV does not serve: every
// scalar type and array of it (64-bit as bigint / BigInt64Array), NTTable, unions, variant
// unions, structure arrays, NTNDArray; RPC; search through EPICS_PVA_NAME_SERVERS; reconnection with
// re-subscription when the server goes away and comes back.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killOnExit, freePort, ensurePythonEnv } from 'epicsperf-testkit/ioc';
import { Context, type PvaReading, type MonitorEvent } from '../../src/index.js';
import { waitFor } from 'epicsperf-testkit/client-helpers';
import { expectSame, p4pRead, plain, type P4pReading } from '../helpers/pva-helpers.js';

const SCRIPT = fileURLToPath(new URL('../helpers/p4p-server.py', import.meta.url));
const CODES = '?bBhHiIlLfds'.split('');
let tcp: number;
let udp: number;
let server: ChildProcess | undefined;
let env: Record<string, string>;
let ctx: Context<'pva'>;

async function startServer(): Promise<void> {
  const python = await ensurePythonEnv();
  const child = spawn(python, ['-u', SCRIPT, String(tcp), String(udp)], { stdio: ['pipe', 'pipe', 'pipe'] });
  killOnExit(child);
  server = child;
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`p4p server not ready: ${err}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`p4p server exited ${code}: ${err}`));
    });
  });
}

async function stopServer(): Promise<void> {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

beforeAll(async () => {
  tcp = await freePort({ tcp: true, udp: false });
  udp = await freePort({ tcp: false, udp: true }, new Set([tcp]));
  env = {
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_BROADCAST_PORT: String(udp),
    EPICS_PVA_SERVER_PORT: String(tcp),
  };
  await startServer();
  ctx = new Context({ env, protocol: 'pva' });
}, 60_000);

afterAll(async () => {
  await ctx?.close();
  await stopServer();
});

describe('every scalar type and array of it matches p4p', () => {
  let ref: Map<string, P4pReading>;
  const names = [...CODES.flatMap((c) => [`P4P:S:${c}`, `P4P:A:${c}`]), 'P4P:S:LMAX', 'P4P:S:ULMAX'];
  beforeAll(async () => {
    ref = new Map((await p4pRead(env, names)).map((r) => [r.name, r]));
  }, 60_000);

  it.each(names)('%s', async (name) => {
    const want = ref.get(name)!;
    expect(want.ok, want.error).toBe(true);
    const r = await ctx.get(name);
    expectSame(expect, plain(r.raw) as Record<string, unknown>, want.value!, name);
  });

  it('64-bit integers are bigint and BigInt64Array / BigUint64Array', async () => {
    expect((await ctx.get('P4P:S:LMAX')).value).toBe(9223372036854775807n);
    expect((await ctx.get('P4P:S:ULMAX')).value).toBe(18446744073709551615n);
    const a = await ctx.get('P4P:A:l');
    expect(a.value).toBeInstanceOf(BigInt64Array);
    expect(Array.from(a.value as BigInt64Array)).toEqual([-2n, -1n, 0n, 1n, 2n]);
    expect((await ctx.get('P4P:A:L')).value).toBeInstanceOf(BigUint64Array);
    expect((await ctx.get('P4P:A:B')).value).toBeInstanceOf(Uint8Array);
    expect((await ctx.get('P4P:A:?')).value).toEqual([true, false, true]);
    expect((await ctx.get('P4P:A:s')).value).toEqual(['a', 'bc', '']);
  });

  it('puts of every kind, read back by p4p', async () => {
    await ctx.put('P4P:S:l', -9007199254740993n);
    await ctx.put('P4P:S:L', '18446744073709551614');
    await ctx.put('P4P:A:d', new Float64Array([0.5, 1.5]));
    await ctx.put('P4P:A:s', ['x', 'y']);
    await ctx.put('P4P:S:?', false);
    const back = new Map(
      (await p4pRead(env, ['P4P:S:l', 'P4P:S:L', 'P4P:A:d', 'P4P:A:s', 'P4P:S:?'])).map((r) => [r.name, r.value!.value]),
    );
    expect(back.get('P4P:S:l')).toBe('-9007199254740993');
    expect(back.get('P4P:S:L')).toBe('18446744073709551614');
    expect(back.get('P4P:A:d')).toEqual([0.5, 1.5]);
    expect(back.get('P4P:A:s')).toEqual(['x', 'y']);
    expect(back.get('P4P:S:?')).toBe(false);
  });
});

describe('types QSRV does not serve', () => {
  it('NTTable: labels and typed columns', async () => {
    const r = await ctx.get('P4P:TABLE');
    expect(r.nt.kind).toBe('NTTable');
    if (r.nt.kind !== 'NTTable') return;
    expect(r.nt.labels).toEqual(['index', 'position', 'label']);
    expect(r.nt.columns.index).toEqual(new Int32Array([0, 1, 2]));
    expect(r.nt.columns.position).toEqual(new Float64Array([0, 0.5, 1]));
    expect(r.nt.columns.label).toEqual(['r0', 'r1', 'r2']);
    expect(r.value).toEqual(r.nt.columns);
  });

  it('a union keeps the selected member, a variant union its own type', async () => {
    const u = await ctx.get('P4P:UNION');
    expect(u.nt.kind).toBe('plain');
    expect(u.raw.value).toEqual({ field: 'b', value: 'chosen' });
    const a = await ctx.get('P4P:ANY');
    expect(a.raw.value).toEqual({ type: { kind: 'scalarArray', type: 'double', array: 'variable' }, value: new Float64Array([1, 2]) });
  });

  it('a structure array', async () => {
    const r = await ctx.get('P4P:STRUCTARR');
    expect(r.raw.points).toEqual([
      { x: 1, y: 0.5 },
      { x: 2, y: 1.5 },
    ]);
    expect(await ctx.getField('P4P:STRUCTARR', 'points')).toMatchObject({ kind: 'structureArray', element: { kind: 'structure' } });
  });

  it('NTNDArray: the image data as a typed array, its dimensions and sizes', async () => {
    const r = await ctx.get('P4P:IMAGE');
    expect(r.nt.kind).toBe('NTNDArray');
    if (r.nt.kind !== 'NTNDArray') return;
    expect(r.nt.value).toEqual(new Uint16Array(Array.from({ length: 12 }, (_, i) => i)));
    expect(r.nt.dimension.map((d) => d.size)).toEqual([4, 3]);
    expect(r.nt.uncompressedSize).toBe(24);
    expect(r.value).toBe(r.nt.value);
  });
});

describe('search and reconnection', () => {
  it('RPC: a pvxs handler gets the argument and its result comes back; its error fails the call', async () => {
    const r = await ctx.rpc('P4P:ADD', { a: 1.5, b: 2 });
    expect(r?.raw).toEqual({ sum: 3.5 });
    await expect(ctx.rpc('P4P:ADD', { x: 1 })).rejects.toThrow(/a and b are needed/);
  });

  it('finds names through EPICS_PVA_NAME_SERVERS alone (TCP search)', async () => {
    const c = new Context({
      env: { EPICS_PVA_ADDR_LIST: '', EPICS_PVA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_NAME_SERVERS: `127.0.0.1:${tcp}` },
      protocol: 'pva',
    });
    try {
      expect((await c.get('P4P:S:d', { timeout: 3000 })).value).toBe(-2.25);
      expect(c.stats().pva?.datagramsSent).toBeGreaterThan(0);
      // The name server's own count: connected, SEARCH messages sent over it, its one answer.
      const [ns] = c.stats().pva!.nameServers;
      expect(ns).toMatchObject({ server: `127.0.0.1:${tcp}`, connected: true });
      expect(ns!.answers).toBeGreaterThanOrEqual(1);
      expect(ns!.searchesSent).toBeGreaterThanOrEqual(ns!.answers);
      expect(c.stats().nameServers).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('a monitor sees the server go away and come back, and its updates resume', async () => {
    const events: MonitorEvent<PvaReading>[] = [];
    const m = ctx.monitor('P4P:COUNT', {}, (ev) => events.push(ev));
    await waitFor(() => m.updates >= 5, 5000, 'first updates');
    await stopServer();
    await waitFor(() => events.some((e) => e.kind === 'disconnected'), 5000, 'the disconnected event');
    const before = m.updates;
    await startServer();
    await waitFor(() => m.updates >= before + 5, 15_000, 'updates after the server came back');
    m.close();
    const kinds = events.map((e) => e.kind).filter((k, i, a) => k !== 'update' || a[i - 1] !== 'update');
    expect(kinds).toEqual(['connected', 'update', 'disconnected', 'connected', 'update']);
    // A get on the same context works again too.
    expect((await ctx.get('P4P:S:s')).value).toBe('text');
  }, 40_000);
});
