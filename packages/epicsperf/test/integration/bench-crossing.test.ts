// The crossing workload end to end (`bench crossing`): every server runner (this project's Node
// server, pythonSoftIOC, pvxs's SharedPV in C++, p4p, caproto, core-pva, epics-rs, and softioc
// behind the gateways: p4p's pvagw, epics-rs's CA and PVA gateways) posts a double and small
// arrays to the reference clients (c-libca over CA, c-pvxs over PVA) on each protocol it serves;
// every post arrives once (or merged into a later one on a loaded host), in order, intact, and
// its crossing time is measured; a put goes through each app's put handler and back (the round
// trip); the JSON fits the schema.
import { describe, expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';
import { SERVERS } from '../../src/servers/index.js';
import { benchJson } from '../helpers/schema.js';

/**
 * ca-gateway-rs (epics-bridge-rs 0.33.0) gives a channel the element count of the value it holds
 * when the client connects, not the upstream channel's, as C ca-gateway does: the round trip's PV
 * then holds one element, and libca refuses the put of 100. Its row says so; its crossing is
 * checked as every other server's.
 */
const CA_GATEWAY_COUNT = /^round trip: XP:LATENCY:DOUBLE: put of 100 elements: Invalid element count requested$/;

describe('bench crossing', () => {
  it('every server, every protocol it serves: each post received once (or merged into a later one), in order, intact, with its crossing time', async () => {
    const { results, stderr } = await benchJson(
      [
        'crossing',
        '--servers',
        SERVERS.map((s) => s.name).join(','),
        '--crossing-int32',
        '12,1000',
        '--crossing-bytes',
        '100',
        '--crossing-roundtrip',
        '1,100',
        '--crossing-count',
        '5',
        '--crossing-period',
        '10',
      ],
      300_000,
    );
    const runs = results.crossing!.runs;
    const expected = SERVERS.flatMap((s) => s.protocols.map((p) => `${s.name}/${p}`));
    expect(runs.map((x) => `${x.server}/${x.protocol}`).sort()).toEqual(expected.sort());
    for (const run of runs) {
      const what = `${run.server} over ${run.protocol}`;
      if (run.server === 'ca-gateway-rs') expect(run.error, what).toMatch(CA_GATEWAY_COUNT);
      else expect(run.error, what).toBeUndefined();
      expect(run.client, what).toBe(run.protocol === 'CA' ? 'c-libca' : 'c-pvxs');
      expect(run.version, what).toBeTruthy();
      expect(
        run.points.map((p) => `${p.payload}:${p.elements}`),
        what,
      ).toEqual(['double:1', 'int32:12', 'int32:1000', 'bytes:100']);
      for (const p of run.points) {
        // Each post received, or merged into a later one by a server or client behind on a
        // loaded host (EPICS monitors may squash; the last post always arrives): most arrive.
        expect(p.updates + (p.merged ?? 0), what).toBe(5);
        expect(p.updates, what).toBeGreaterThanOrEqual(3);
        // One host, one clock: after the post, and not seconds after it.
        expect(p.minMs, what).toBeGreaterThan(0);
        expect(p.maxMs, what).toBeLessThan(1000);
      }
    }
    // The round trip through each app's put handler: every round of every size.
    for (const run of runs.filter((x) => x.server !== 'ca-gateway-rs')) {
      expect(
        run.roundTrip?.map((p) => [p.elements, p.updates, p.ok]),
        `${run.server} over ${run.protocol}`,
      ).toEqual([
        [1, 5, true],
        [100, 5, true],
      ]);
    }
    expect(stderr).toMatch(/crossing CA · node/);
  }, 300_000);

  it('an unknown server is a usage error naming the servers', async () => {
    const r = await runCli(['bench', 'crossing', '--servers', 'node,nope', '--no-keep']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no server "nope" \(servers: node, softioc/);
  });
});
