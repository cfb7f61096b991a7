// On a real network stack with the EPICS defaults: the built-in IOC serves every interface of one
// namespace host, and on another host, with no EPICS_* set (no address list, automatic lists on),
// this library, the CLI and every client's runner find it by broadcast on the bridge between
// them. A send the system refuses shows in stats() and the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENTS, prepareClients } from '../../src/clients/index.js';
import type { DestinationStats } from '../../../client/src/index.js';
import { BIN } from 'epicsperf-testkit/cli';
import { expectHostMonitor } from '../helpers/host-monitor.js';
import { BROADCAST, cleanEnv, removeStale, Rig, type Host } from 'epicsperf-testkit/netns';
import { waitFor } from 'epicsperf-testkit/wait';
import { alive } from 'epicsperf-testkit/python';

const CLIENT_SCRIPT = fileURLToPath(new URL('../helpers/netns-client.mjs', import.meta.url));

const made = Rig.make(2);
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/epicsperf/test/integration/network.test.ts skipped: ${made}\n`);

interface Seen {
  caGet: { value?: number; error?: string };
  pvaGet: { value?: number; error?: string };
  caMonitor: { events: string[]; values: number[] };
  pvaMonitor: { events: string[]; values: number[] };
  caSnapshot: { name: string; ok: boolean; code?: string }[];
  pvaSnapshot: { name: string; ok: boolean; code?: string }[];
  stats: { searchDestinations: DestinationStats[]; pva: { searchDestinations: DestinationStats[] } };
}

describe.skipIf(!rig)('namespace hosts of a run that is killed', () => {
  it('what the run started on a host is killed with it, and the next net removes the namespaces', async () => {
    // A run of its own, as a bench or a test file is: it makes a net and starts a process there.
    const netns = fileURLToPath(new URL('../../../../benchmarks/netns.mjs', import.meta.url));
    const script = `import { Net } from ${JSON.stringify(netns)};
const net = new Net(1, 'epxk');
const c = net.spawn(net.hosts[0], 'sleep', ['600'], process.env, 'ignore');
console.log(JSON.stringify({ pid: c.pid, ns: net.hosts[0].ns }));
setInterval(() => {}, 1000);`;
    const run = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => run.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    const { pid, ns } = JSON.parse(line) as { pid: number; ns: string };
    // Once `sleep` runs, what comes before it on the host (ip netns exec, setpriv) is done.
    const comm = () => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    await waitFor(() => comm() === 'sleep', 5000, 'the process on the host to start');
    const ended = new Promise((resolve) => run.once('exit', resolve));
    run.kill('SIGKILL');
    // Reaped: a zombie's pid would still look alive to the next net, which keeps its namespaces.
    await ended;
    await waitFor(() => !alive(pid), 5000, 'the process on the host to end with the run');
    removeStale('epxk');
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(ns);
  });
});

describe.skipIf(!rig)('on namespace hosts with the EPICS defaults', () => {
  let iocHost: Host;
  let clientHost: Host;
  const epicsperf = (args: string[], env?: Record<string, string>) =>
    rig!.run(clientHost, process.execPath, [BIN, ...args], { env: cleanEnv(env), timeoutMs: 90_000 });

  beforeAll(async () => {
    [iocHost, clientHost] = rig!.hosts as [Host, Host];
    // The runners built (on first use, minutes for the Rust ones) before any test times them.
    await prepareClients(CLIENTS, true);
    const { out } = await rig!.startIoc(iocHost);
    // Clients elsewhere need nothing but the EPICS defaults: no address list in what it prints.
    expect(out).toMatch(/^EPICS_CA_SERVER_PORT=5064$/m);
    expect(out).toMatch(/^EPICS_PVA_BROADCAST_PORT=5076$/m);
    expect(out).not.toMatch(/ADDR_LIST/);
  }, 600_000);

  afterAll(() => rig?.close());

  it('the library reads, monitors and snapshots over CA and PVA, found by broadcast', async () => {
    const r = await rig!.run(clientHost, process.execPath, [CLIENT_SCRIPT], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout) as Seen;
    expect(seen.caGet).toEqual({ value: 42 });
    expect(seen.pvaGet).toEqual({ value: 3.14159 });
    for (const m of [seen.caMonitor, seen.pvaMonitor]) {
      expect(m.events.slice(0, 2)).toEqual(['connected', 'update']);
      expect(m.values).toHaveLength(3);
      expect(m.values[2]! - m.values[0]!).toBe(2); // the counter, every update in order
    }
    for (const snap of [seen.caSnapshot, seen.pvaSnapshot]) {
      expect(snap.map((x) => x.ok)).toEqual([true, true, true, false]);
      expect(snap[3]!.code).toBe('ERR_EPICS_NOT_FOUND');
    }
    // The only destinations are the broadcast addresses of the host's one interface.
    expect(seen.stats.searchDestinations).toEqual([
      expect.objectContaining({ destination: `${BROADCAST}:5064`, broadcast: true, failed: 0 }),
    ]);
    expect(seen.stats.pva.searchDestinations).toEqual([
      expect.objectContaining({ destination: `${BROADCAST}:5076`, broadcast: true, failed: 0 }),
    ]);
    expect(seen.stats.searchDestinations[0]!.sent).toBeGreaterThan(0);
  });

  it('a send the system refuses is counted per destination and logged once', async () => {
    // The client host's policy forbids 198.19.0.0/16: every search sent there fails in sendto().
    rig!.ip(clientHost, 'route', 'add', 'prohibit', '198.19.0.0/16');
    const env = { EPICS_CA_ADDR_LIST: `198.19.0.1 ${BROADCAST}`, EPICS_CA_AUTO_ADDR_LIST: 'NO' };
    const r = await epicsperf(['ca', 'get', '-w', '1.5', 'TEST:KIND:LONG', 'TEST:NO:SUCH'], env);
    expect(r.stdout).toMatch(/TEST:KIND:LONG\s+42/);
    const lines = r.stderr.split('\n').filter((l) => l.includes('search to 198.19.0.1:5064'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/search to 198\.19\.0\.1:5064 refused: EACCES/);

    const script = [
      `import { Context } from ${JSON.stringify(new URL('../../../client/dist/index.js', import.meta.url).href)};`,
      `const ctx = new Context({ addrList: ['198.19.0.1'], autoAddrList: false, env: {} });`,
      `await ctx.get('TEST:KIND:LONG', { timeout: 500 }).catch(() => {});`,
      `console.log(JSON.stringify(ctx.stats().searchDestinations)); await ctx.close();`,
    ].join('\n');
    const s = await rig!.run(clientHost, process.execPath, ['--input-type=module', '-e', script], {
      env: cleanEnv({ EPICSPERF_LOG_LEVEL: 'silent' }),
    });
    const dests = JSON.parse(s.stdout) as DestinationStats[];
    expect(dests).toHaveLength(1);
    expect(dests[0]).toMatchObject({ destination: '198.19.0.1:5064', broadcast: false, sent: 0, lastError: 'EACCES' });
    expect(dests[0]!.failed).toBeGreaterThan(1);
  });

  /** `epicsperf snapshot` of two PVs and a missing one, as `client`, on the client host. */
  const snapshot = async (client: string) => {
    const list = `printf 'TEST:CALC1\\nTEST:KIND:LONG\\nTEST:NO:SUCH\\n'`;
    const cmd = `${list} | ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} snapshot - --client ${client} --ioc env --timeout 2000 --format json`;
    const r = await rig!.run(clientHost, 'sh', ['-c', cmd], { env: cleanEnv(), timeoutMs: 90_000 });
    const out = JSON.parse(r.stdout || '{}') as {
      answered?: number;
      failed?: number;
      rows?: { name: string; ok: boolean; value?: unknown }[];
    };
    expect({ code: r.code, answered: out.answered, failed: out.failed }, r.stderr).toEqual({ code: 1, answered: 2, failed: 1 });
    expect(out.rows!.find((x) => !x.ok)?.name).toBe('TEST:NO:SUCH');
    return out.rows!;
  };

  it('the CLI: snapshot of a list (CA and PVA) and ca get', async () => {
    const rows = await snapshot('node');
    expect(rows.find((x) => x.name === 'TEST:KIND:LONG')?.value).toBe(42);
    const pvaRows = await snapshot('node-pva');
    expect(pvaRows.find((x) => x.name === 'TEST:KIND:LONG')?.value).toBe(42);
    const get = await epicsperf(['ca', 'get', 'TEST:KIND:DOUBLE', 'TEST:KIND:LONG']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/TEST:KIND:DOUBLE\s+3\.14159/);
    expect(get.stdout).toMatch(/TEST:KIND:LONG\s+42/);
  });

  // Each client on its own, a few at once (the project's maxConcurrency): most of a run is its
  // missing name's timeout waited out.
  const snapshotClients = CLIENTS.filter((c) => c.tasks.includes('snapshot')).map((c) => c.name);
  it.concurrent.each(snapshotClients)('runner %s: snapshot with --ioc env finds the IOC by broadcast', async (client) => {
    await snapshot(client);
  });

  const monitorClients = ['node', 'node-pva', 'c-libca', 'c-pvxs', 'pyepics', 'p4p'];
  it.concurrent.each(monitorClients)('runner %s: monitor with --ioc env, every sample checked', async (client) => {
    await expectHostMonitor(epicsperf, client);
  });
});
