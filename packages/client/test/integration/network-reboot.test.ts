// IOC reboots on namespace hosts, in the network configurations sites use, for this library over
// CA and PV Access: the EPICS defaults (broadcast across a bridge), address lists naming the IOC
// with the IOC's default beacons, and address lists across a router, where no beacon arrives.
// (Name servers across a router: network-routed.test.ts.) The IOC is killed and started again
// after a short outage; every monitor comes back, by the beacons where they arrive (at once), by
// the bounded search of a lost server's names where they do not (within about a second).
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';
import { Client, sleep, waitFor } from '../helpers/reboot-client.js';

const NODE_CLIENT = fileURLToPath(new URL('../../../../benchmarks/reboot-client.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const N = 20;

const CONFIGS = [
  { name: 'the EPICS defaults, broadcast across a bridge', routed: false, lists: false, withinMs: 1000 },
  { name: "address lists naming the IOC, the IOC's default beacons", routed: false, lists: true, withinMs: 1000 },
  { name: 'address lists across a router, no beacon reaching the client', routed: true, lists: true, withinMs: 2500 },
];

const rigs: Rig[] = [];
afterAll(() => rigs.forEach((r) => r.close()));

describe.each(CONFIGS)('IOC reboot with $name', ({ routed, lists, withinMs }) => {
  const made = routed ? Rig.routed({ left: 1, right: 1 }) : Rig.make(2);
  const rig = typeof made === 'string' ? undefined : made;
  if (rig) rigs.push(rig);
  else process.stderr.write(`packages/client/test/integration/network-reboot.test.ts skipped: ${String(made)}\n`);

  it.skipIf(!rig)(
    `CA and PVA monitors of ${N} counters resume within ${withinMs / 1000} s of the IOC's return`,
    async () => {
      const [iocHost, clientHost] = rig!.hosts as [Host, Host];
      const ioc = iocHost.address;
      const env = cleanEnv(
        lists ? { EPICS_CA_ADDR_LIST: ioc, EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_ADDR_LIST: ioc, EPICS_PVA_AUTO_ADDR_LIST: 'NO' } : {},
      );
      const extra = ['--records', String(N)];
      let server = (await rig!.startIoc(iocHost, cleanEnv(), extra)).child;
      const clients = ['ca', 'pva'].map(
        (p) => new Client(`node-${p}`, rig!.spawn(clientHost, process.execPath, [NODE_CLIENT, p, String(N), DIST], env)),
      );
      for (const c of clients) expect(await c.next(30_000)).toBe('ready');
      for (const c of clients)
        await waitFor(`${c.name}: every monitor`, 20_000, async () => ((await c.report()).resumed === N ? true : undefined));
      // Long enough for every name's backoff to have grown past the bound.
      await rig!.killIoc(iocHost, server);
      for (const c of clients) expect(await c.ask('mark')).toBe('ok');
      await sleep(8000);
      server = (await rig!.startIoc(iocHost, cleanEnv(), extra)).child;
      const ready = Date.now();
      const times = await Promise.all(
        clients.map((c) =>
          waitFor(`${c.name}: every monitor after the restart`, 60_000, async () => {
            const r = await c.report();
            return r.resumed === N ? r.last! - ready : undefined;
          }),
        ),
      );
      const said = clients.map((c, i) => `${c.name} ${times[i]} ms`).join(', ');
      process.stderr.write(`network-reboot: resumed after the new IOC was ready: ${said}\n`);
      for (const t of times) expect(t, said).toBeLessThan(withinMs);
      for (const c of clients) c.child.stdin!.end();
    },
    120_000,
  );
});
