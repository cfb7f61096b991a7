// `epicsperf monitor` of 5 counters x 5 samples by one client on a namespace host, with the
// IOC the environment names (--ioc env): the run must be ok with every sample checked and none
// missed. Shared by the namespace-host tests.
import { expect } from 'vitest';
import type { Finished } from 'epicsperf-testkit/netns';

export async function expectHostMonitor(epicsperf: (args: string[]) => Promise<Finished>, client: string): Promise<void> {
  const args = ['monitor', '--client', client, '--ioc', 'env', '--records', '5', '--samples', '5', '--rate', '10', '--format', 'json'];
  const r = await epicsperf(args);
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as { run: { ok: boolean; check: { samples: number; missedValues: number } } };
  expect(out.run.ok, r.stderr).toBe(true);
  expect(out.run.check).toMatchObject({ samples: 25, missedValues: 0 });
}
