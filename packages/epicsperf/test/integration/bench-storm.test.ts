// The connect storm end to end (`bench storm`): every server (each runner, the gateway and the
// built-in IOC) serves still counters; one client per protocol (c-libca, node-pva) asks for all of
// them at once; every channel answered with the counter's value; the JSON fits the schema.
import { expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { SERVERS } from '../../src/servers/index.js';
import type { BenchResults } from '../../src/results/index.js';
import { schemaErrors } from '../helpers/schema.js';

it('every server, every protocol it serves: every channel of the storm answered, each value checked', async () => {
  const r = await runCli(['bench', 'storm', '--storm-channels', '500', '--storm-timeout', '20000', '--format', 'json', '--no-keep'], {
    timeoutMs: 240_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', results)).toEqual([]);
  const runs = results.storm!.runs;
  const expected = [...SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name}/${p}`)), 'ioc/CA', 'ioc/PVA'];
  expect(runs.map((x) => `${x.server}/${x.protocol}`).sort()).toEqual(expected.sort());
  for (const run of runs) {
    const what = `${run.server} over ${run.protocol}`;
    expect([run.ok, run.error], what).toEqual([true, undefined]);
    expect(run.answered, what).toBe(500);
    expect(run.wrong, what).toBe(0);
    expect(run.client, what).toBe(run.protocol === 'CA' ? 'c-libca' : 'node-pva');
    expect(run.version, what).toBeTruthy();
    expect(run.serverCpuS, what).toBeGreaterThanOrEqual(0);
    expect(run.serverPeakRssMb, what).toBeGreaterThan(1);
  }
}, 240_000);
