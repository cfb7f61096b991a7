// Across a router: the built-in IOC on one subnet, clients on another, broadcasts kept on their own
// side. With the EPICS defaults no client finds the IOC; with name servers (EPICS_CA_NAME_SERVERS,
// EPICS_PVA_NAME_SERVERS) and no UDP destination, this library, pyepics and p4p read it, this
// library's CA client sends no UDP datagram at all, and its monitors come back after the IOC restarts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensurePythonEnv } from 'epicsperf-testkit/ioc';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';

const CLIENT_SCRIPT = fileURLToPath(new URL('../helpers/netns-routed-client.mjs', import.meta.url));
const READ_MS = 4000;

const made = Rig.routed({ left: 1, right: 1 });
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/client/test/integration/network-routed.test.ts skipped: ${made}\n`);

const PYEPICS_GET = `
import json, sys, epics
v = epics.caget(sys.argv[1], timeout=float(sys.argv[2]), connection_timeout=float(sys.argv[2]))
print(json.dumps({"value": None if v is None else float(v)}))
`;
const P4P_GET = `
import json, sys
from p4p.client.thread import Context
ctx = Context("pva")
try:
    out = {"value": float(ctx.get(sys.argv[1], timeout=float(sys.argv[2])))}
except Exception as e:
    out = {"error": type(e).__name__}
ctx.close()
print(json.dumps(out))
`;

interface Read {
  value?: number | null;
  error?: string;
}
interface Event {
  t: number;
  kind: string;
  value?: number;
}

describe.skipIf(!rig)('on namespace hosts across a router', () => {
  let iocHost: Host;
  let clientHost: Host;
  let python: string;
  let ioc: ChildProcess | undefined;

  /** The EPICS_* of a client that searches only the IOC as a name server. */
  const nameServer = (proto: 'CA' | 'PVA'): Record<string, string> => ({
    [`EPICS_${proto}_NAME_SERVERS`]: iocHost.address,
    [`EPICS_${proto}_AUTO_ADDR_LIST`]: 'NO',
    [`EPICS_${proto}_ADDR_LIST`]: '',
  });

  async function startIoc(): Promise<void> {
    ioc = (await rig!.startIoc(iocHost)).child;
  }

  /** Kill the IOC and wait until nothing of it runs on its host (its ports are free again). */
  async function killIoc(): Promise<void> {
    if (ioc) await rig!.killIoc(iocHost, ioc);
    ioc = undefined;
  }

  /** One read by this library on the client host. */
  const libGet = async (name: string, env: Record<string, string>): Promise<Read> => {
    const r = await rig!.run(clientHost, process.execPath, [CLIENT_SCRIPT, 'get', name, String(READ_MS)], {
      env: cleanEnv(env),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const { value, error } = JSON.parse(r.stdout) as Read;
    return error === undefined ? { value } : { error };
  };

  /** One read by pyepics or p4p on the client host. */
  const pyGet = async (script: string, name: string, env: Record<string, string>): Promise<Read> => {
    const r = await rig!.run(clientHost, python, ['-c', script, name, String(READ_MS / 1000)], { env: cleanEnv(env), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    // pyepics prints to stdout too ("cannot connect to ..."): the JSON is the last line
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as Read;
  };

  beforeAll(async () => {
    [iocHost, clientHost] = rig!.hosts as [Host, Host];
    python = await ensurePythonEnv();
    await startIoc();
  });

  afterAll(() => rig?.close());

  it('the hosts: the IOC on the left subnet, the client on the right one', () => {
    expect([iocHost.address, iocHost.side, clientHost.address, clientHost.side]).toEqual(['198.18.0.1', 'left', '198.18.1.1', 'right']);
  });

  it('with the EPICS defaults nothing is found: the broadcasts stay on the client subnet', async () => {
    const [ca, pva] = await Promise.all([libGet('TEST:KIND:LONG', {}), libGet('pva://TEST:KIND:LONG', {})]);
    expect(ca.error).toMatch(/^ERR_EPICS_(NOT_FOUND|TIMEOUT):/);
    expect(pva.error).toMatch(/^ERR_EPICS_(NOT_FOUND|TIMEOUT):/);
    const [pyepics, p4p] = await Promise.all([pyGet(PYEPICS_GET, 'TEST:KIND:LONG', {}), pyGet(P4P_GET, 'TEST:KIND:LONG', {})]);
    expect(pyepics).toEqual({ value: null });
    expect(p4p).toEqual({ error: 'TimeoutError' });
  });

  it('EPICS_PVA_NAME_SERVERS: this library and p4p read the value over TCP', async () => {
    expect(await libGet('pva://TEST:KIND:LONG', nameServer('PVA'))).toEqual({ value: 42 });
    expect(await pyGet(P4P_GET, 'TEST:KIND:LONG', nameServer('PVA'))).toEqual({ value: 42 });
  });

  // Needs the CA name servers of the client library (EPICS_CA_NAME_SERVERS).
  it('EPICS_CA_NAME_SERVERS: this library reads the value, sending no UDP datagram', async () => {
    const before = rig!.udpSent(clientHost);
    const read = await libGet('TEST:KIND:LONG', nameServer('CA'));
    const sent = rig!.udpSent(clientHost) - before;
    expect({ read, sent }).toEqual({ read: { value: 42 }, sent: 0 });
  });

  it('EPICS_CA_NAME_SERVERS: pyepics (libca) reads the value', async () => {
    expect(await pyGet(PYEPICS_GET, 'TEST:KIND:LONG', nameServer('CA'))).toEqual({ value: 42 });
  });

  // The CA case needs the CA name servers of the client library.
  it.each([
    ['PVA', 'pva://TEST:CALC1'],
    ['CA', 'TEST:CALC1'],
  ] as const)(
    '%s: a monitor through the name server resumes after the IOC restarts',
    async (proto, name) => {
      const events: Event[] = [];
      const mon = rig!.spawn(clientHost, process.execPath, [CLIENT_SCRIPT, 'monitor', name], cleanEnv(nameServer(proto)));
      let buf = '';
      mon.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) if (l) events.push(JSON.parse(l) as Event);
      });
      const waitFor = async (what: string, ms: number, ok: () => boolean): Promise<void> => {
        const end = Date.now() + ms;
        while (!ok()) {
          if (Date.now() > end) throw new Error(`no ${what} in ${ms / 1000} s; events: ${JSON.stringify(events.map((e) => e.kind))}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      try {
        await waitFor('first update', 20_000, () => events.some((e) => e.kind === 'update'));
        await killIoc();
        await waitFor('disconnection', 10_000, () => events.some((e) => e.kind === 'disconnected'));
        await new Promise((r) => setTimeout(r, 2000));
        const cut = events.length;
        await startIoc();
        const ready = Date.now();
        const resumed = (): Event | undefined => events.slice(cut).find((e) => e.kind === 'update');
        await waitFor('update from the new IOC', 30_000, () => resumed() !== undefined);
        const after = events.slice(cut);
        expect(after.map((e) => e.kind).slice(0, 2)).toEqual(['connected', 'update']);
        // Back within a few seconds of the new IOC answering reads.
        expect(resumed()!.t - ready, JSON.stringify(after.slice(0, 3))).toBeLessThan(8000);
      } finally {
        mon.stdin!.end();
        mon.kill('SIGKILL');
        if (!ioc) await startIoc();
      }
    },
    150_000,
  );
});
