// The built-in IOC served by this project's server (`epicsperf ioc --server node`) on a namespace
// host of its own, serving every interface with the EPICS defaults: on another host this library
// (CA and PVA), libca (c-libca) and pvxs (c-pvxs) find it by broadcast, by an address list and by
// name server, read it and monitor it with every sample checked; after it restarts, libca's and
// pvxs's monitors come back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BIN } from 'epicsperf-testkit/cli';
import { expectHostMonitor } from '../helpers/host-monitor.js';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';
import { ensurePythonEnv } from 'epicsperf-testkit/ioc';

const SERVER_ARGS = ['--server', 'node'];
const CLIENT_SCRIPT = fileURLToPath(new URL('../helpers/netns-client.mjs', import.meta.url));

const made = Rig.make(2);
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/epicsperf/test/integration/network-node-server.test.ts skipped: ${made}\n`);

interface Seen {
  caGet: { value?: number; error?: string };
  pvaGet: { value?: number; error?: string };
  caMonitor: { events: string[]; values: number[] };
  pvaMonitor: { events: string[]; values: number[] };
}

describe.skipIf(!rig)('the Node server on a namespace host', () => {
  let iocHost: Host;
  let clientHost: Host;
  let ioc: ChildProcess;
  const epicsperf = (args: string[], env?: Record<string, string>) =>
    rig!.run(clientHost, process.execPath, [BIN, ...args], { env: cleanEnv(env), timeoutMs: 90_000 });

  beforeAll(async () => {
    [iocHost, clientHost] = rig!.hosts as [Host, Host];
    const started = await rig!.startIoc(iocHost, cleanEnv(), SERVER_ARGS);
    ioc = started.child;
    expect(started.out).toMatch(/^EPICS_CA_SERVER_PORT=5064$/m);
    expect(started.out).not.toMatch(/ADDR_LIST/);
  });

  afterAll(() => rig?.close());

  const by: [string, () => Record<string, string>][] = [
    ['broadcast (the EPICS defaults)', () => ({})],
    [
      'an address list',
      () => ({
        EPICS_CA_ADDR_LIST: iocHost.address,
        EPICS_CA_AUTO_ADDR_LIST: 'NO',
        EPICS_PVA_ADDR_LIST: iocHost.address,
        EPICS_PVA_AUTO_ADDR_LIST: 'NO',
      }),
    ],
    [
      'name server (TCP search)',
      () => ({
        EPICS_CA_NAME_SERVERS: `${iocHost.address}:5064`,
        EPICS_CA_AUTO_ADDR_LIST: 'NO',
        EPICS_PVA_NAME_SERVERS: `${iocHost.address}:5075`,
        EPICS_PVA_AUTO_ADDR_LIST: 'NO',
      }),
    ],
  ];

  it.each(by)('this library finds it by %s, reads and monitors over CA and PVA', async (_how, env) => {
    const r = await rig!.run(clientHost, process.execPath, [CLIENT_SCRIPT], { env: cleanEnv(env()), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout) as Seen;
    expect(seen.caGet).toEqual({ value: 42 });
    expect(seen.pvaGet).toEqual({ value: 3.14159 });
    for (const m of [seen.caMonitor, seen.pvaMonitor]) {
      expect(m.events.slice(0, 2)).toEqual(['connected', 'update']);
      expect(m.values[2]! - m.values[0]!).toBe(2);
    }
  });

  it.each(['c-libca', 'c-pvxs'])('%s finds it by broadcast and monitors it, every sample checked', async (client) => {
    await expectHostMonitor(epicsperf, client);
  });

  it('after it restarts, monitors of libca (pyepics) and pvxs (p4p) come back', async () => {
    // Both clients monitor a counter, found by broadcast; the server is killed and started again.
    const script = String.raw`
import json, sys, time, threading
from epics import ca
from p4p.client.thread import Context
seen = {'ca': [], 'pva': []}
lock = threading.Lock()
def on_ca(pvname=None, value=None, **kw):
    with lock: seen['ca'].append((time.time(), value))
chid = ca.create_channel('TEST:CALC1', callback=None)
ca.connect_channel(chid, timeout=10)
ca.create_subscription(chid, callback=on_ca)
ctx = Context('pva')
def on_pva(v):
    if isinstance(v, Exception): return
    with lock: seen['pva'].append((time.time(), float(v)))
sub = ctx.monitor('TEST:CALC1', on_pva, notify_disconnect=True)
print('watching', flush=True)
sys.stdin.readline()
time.sleep(float(sys.argv[1]))
with lock: print(json.dumps(seen), flush=True)
sub.close(); ctx.close()
`;
    const python = await ensurePythonEnv();
    const watcher = rig!.spawn(clientHost, python, ['-u', '-c', script, '16'], cleanEnv());
    let out = '';
    watcher.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise<void>((resolve) => {
      const check = () => (/watching/.test(out) ? resolve() : setTimeout(check, 100));
      check();
    });
    await rig!.killIoc(iocHost, ioc);
    const restartedAt = Date.now() / 1000;
    ioc = (await rig!.startIoc(iocHost, cleanEnv(), SERVER_ARGS)).child;
    const readyAt = Date.now() / 1000;
    watcher.stdin!.write('\n');
    await new Promise((resolve) => watcher.once('exit', resolve));
    const seen = JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as Record<'ca' | 'pva', [number, number][]>;
    // Within seconds of the new server being ready: libca searches again on its backoff (about 10 s
    // after the restart here, for softioc too), pvxs at once (about 1 s, and 1.4 s for softioc).
    const within = { ca: 15, pva: 5 };
    for (const proto of ['ca', 'pva'] as const) {
      const after = seen[proto].filter(([t]) => t > restartedAt);
      expect(after.length, `${proto}: updates after the restart`).toBeGreaterThan(3);
      expect(after[0]![0] - readyAt, `${proto}: first update after the restart, s`).toBeLessThan(within[proto]);
    }
  }, 90_000);
});
