// PV Access over IPv6 and multicast on namespace hosts: the built-in IOC on one host, its QSRV
// serving IPv4 and IPv6 and listening for searches to a multicast group (EPICS_PVAS_INTF_ADDR_LIST,
// which `epicsperf ioc --listen 0.0.0.0` passes through to the IOC); on the other host, this
// library reads and monitors a PV found through an IPv6 address list, an IPv6 name server, an
// IPv4 and an IPv6 multicast group, and p4p reads the same PV through the IPv6 address list. The
// same with the IOC on this project's server (`--server node`), which reads the list as pvxs does.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { ensurePythonEnv } from 'epicsperf-testkit/ioc';
import type { DestinationStats } from '../../src/index.js';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';

const CLIENT_SCRIPT = fileURLToPath(new URL('../helpers/netns-pva-client.mjs', import.meta.url));
const GROUP = '224.0.1.76';
const GROUP6 = 'ff02::1:76';

const made = Rig.make(2);
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/client/test/integration/pva-ipv6.test.ts skipped: ${made}\n`);

interface Seen {
  get: { value?: number; error?: string };
  monitor: { events: string[]; values: number[] };
  stats: { pva: { searchDestinations: DestinationStats[] } };
}

let iocHost: Host;
let clientHost: Host;
let ioc6 = '';

beforeAll(() => {
  if (!rig) return;
  [iocHost, clientHost] = rig.hosts as [Host, Host];
  ioc6 = rig.addIpv6(iocHost, 1);
  rig.addIpv6(clientHost, 2);
});

afterAll(() => rig?.close());

describe.skipIf(!rig).each(['softioc', 'node'])('PV Access over IPv6 and multicast, on namespace hosts, the IOC on %s', (server) => {
  let ioc: ChildProcess | undefined;

  beforeAll(async () => {
    // What a site does for pvxs: [::] beside 0.0.0.0 for IPv6 (searches on UDP [::]:5076, TCP on
    // [::]:5075), and the multicast group, which the server joins (on the interface of its route:
    // "GROUP@eth0" would also have pvxs bind TCP to eth0's address, which the [::] wildcard holds).
    const env = cleanEnv({ EPICS_PVAS_INTF_ADDR_LIST: `0.0.0.0 [::] ${GROUP} [${GROUP6}]` });
    const { child, out } = await rig!.startIoc(iocHost, env, ['--server', server]);
    ioc = child;
    expect(out).toMatch(/^EPICS_PVA_SERVER_PORT=5075$/m);
  });

  afterAll(async () => {
    if (ioc) await rig!.killIoc(iocHost, ioc);
  });

  /** The library on the client host with `options` (no EPICS_* from the environment). */
  const library = async (options: Record<string, unknown>, timeoutMs = 5000): Promise<Seen> => {
    const r = await rig!.run(clientHost, process.execPath, [CLIENT_SCRIPT, JSON.stringify(options), String(timeoutMs)], {
      env: cleanEnv(),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Seen;
  };

  const expectRead = (seen: Seen) => {
    expect(seen.get).toEqual({ value: 3.14159 });
    expect(seen.monitor.events.slice(0, 2)).toEqual(['connected', 'update']);
    expect(seen.monitor.values).toHaveLength(3);
    expect(seen.monitor.values[2]! - seen.monitor.values[0]!).toBe(2); // the counter, in order
  };

  it('an IPv6 address list: get and monitor', async () => {
    const seen = await library({ pvaAddrList: [`[${ioc6}]`], pvaAutoAddrList: false });
    expectRead(seen);
    expect(seen.stats.pva.searchDestinations).toEqual([
      expect.objectContaining({ destination: `[${ioc6}]:5076`, broadcast: false, failed: 0 }),
    ]);
    expect(seen.stats.pva.searchDestinations[0]!.sent).toBeGreaterThan(0);
  });

  it('an IPv6 name server over TCP (no UDP destination at all)', async () => {
    const seen = await library({ pvaAddrList: [], pvaAutoAddrList: false, pvaNameServers: [`[${ioc6}]:5075`] });
    expectRead(seen);
    expect(seen.stats.pva.searchDestinations).toEqual([]);
  });

  it('with IPv6 off (PVXS_ENABLE_IPV6=NO) the IPv6 entry is left out and nothing is found', async () => {
    const seen = await library({ env: { PVXS_ENABLE_IPV6: 'NO' }, pvaAddrList: [`[${ioc6}]`], pvaAutoAddrList: false }, 1000);
    expect(seen.get.error).toMatch(/^ERR_EPICS_NOT_FOUND/);
    expect(seen.monitor.values).toEqual([]);
    expect(seen.stats.pva.searchDestinations).toEqual([]);
  });

  it('a multicast group with TTL and interface: found by the server that joined it', async () => {
    const seen = await library({ pvaAddrList: [`${GROUP},1@eth0`], pvaAutoAddrList: false });
    expectRead(seen);
    expect(seen.stats.pva.searchDestinations).toEqual([
      expect.objectContaining({ destination: `${GROUP}:5076,1@eth0`, broadcast: false, failed: 0 }),
    ]);
  });

  it('an IPv6 multicast group with its interface', async () => {
    const seen = await library({ pvaAddrList: [`[${GROUP6}]:5076,1@eth0`], pvaAutoAddrList: false });
    expectRead(seen);
    expect(seen.stats.pva.searchDestinations).toEqual([expect.objectContaining({ destination: `[${GROUP6}]:5076,1@eth0`, failed: 0 })]);
  });

  it('p4p reads the same value through the IPv6 address list', async () => {
    const python = await ensurePythonEnv();
    const script = [
      'import json',
      'from p4p.client.thread import Context',
      'ctx = Context("pva")',
      'print(json.dumps({"value": float(ctx.get("TEST:KIND:DOUBLE", timeout=5.0))}))',
      'ctx.close()',
    ].join('\n');
    const env = cleanEnv({ EPICS_PVA_ADDR_LIST: `[${ioc6}]`, EPICS_PVA_AUTO_ADDR_LIST: 'NO' });
    const r = await rig!.run(clientHost, python, ['-c', script], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const lib = await library({ pvaAddrList: [`[${ioc6}]`], pvaAutoAddrList: false });
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ value: lib.get.value });
  });
});
