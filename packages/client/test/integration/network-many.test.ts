// Many PV Access monitors over a real network: 1,000 counters of the built-in IOC on one namespace
// host, monitored at once by this library on another. A pvxs server (QSRV) whose send queue is
// full when it accepts a monitor fails it ("Monitor Create implied error") and then writes a stray
// empty reply; on loopback that queue never fills, across a network it does. The library keeps at
// most 64 INITs unanswered per connection, and ignores a reply to a request it no longer has.
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';

const CLIENT = fileURLToPath(new URL('../../../../benchmarks/reboot-client.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const N = 1000;

const made = Rig.make(2);
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/client/test/integration/network-many.test.ts skipped: ${made}\n`);

describe.skipIf(!rig)('many PV Access monitors across a network', () => {
  afterAll(() => rig?.close());

  it(`${N} monitors of this library on another host all update, none refused by the server`, async () => {
    const [iocHost, clientHost] = rig!.hosts as [Host, Host];
    await rig!.startIoc(iocHost, cleanEnv(), ['--records', String(N)]);
    const child = rig!.spawn(clientHost, process.execPath, [CLIENT, 'pva', String(N), DIST], cleanEnv({ NODE_DEBUG: 'epics-client' }));
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('ready');
    let resumed = 0;
    const end = Date.now() + 20_000;
    while (resumed < N && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      child.stdin!.write('report\n');
      resumed = (JSON.parse((await lines.next()).value as string) as { resumed: number }).resumed;
    }
    expect(
      resumed,
      stderr
        .split('\n')
        .filter((l) => /error|closed/i.test(l))
        .slice(0, 5)
        .join('\n'),
    ).toBe(N);
    // No connection was lost on the way (a stray reply taken for malformed data closed it).
    expect(stderr).not.toMatch(/PVA connection closed/);
    child.stdin!.end();
  }, 60_000);
});
