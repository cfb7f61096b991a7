// The latency workload: a few clients on two sizes against the built-in IOC on both its servers
// (points present and sane: each put and its own update, over CA and PVA), the byte-array case
// through the command line, and the fit of fixed cost and MB/s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { findClient, prepareClients } from '../../src/clients/index.js';
import { fitLatency, runLatency } from '../../src/bench/latency.js';
import type { BenchResults, LatencyPoint } from '../../src/results/index.js';
import { schemaErrors } from '../helpers/schema.js';
import { runCli } from 'epicsperf-testkit/cli';

/** A reference client of each protocol and the Java runners (whose puts and updates are their own). */
const TIMED = ['node', 'c-pvxs', 'java-caj', 'java-corepva'];

describe.each(['softioc', 'node'] as const)('latency against the built-in IOC on %s', (server) => {
  let python: string;
  let ioc: Ioc;
  beforeAll(async () => {
    python = await prepareClients(
      TIMED.map((n) => findClient(n)!),
      true,
    );
    ioc = await startIoc({ records: 1, rate: 0, arrayElements: 0, latencyElements: 10_000, python, server });
  });
  afterAll(async () => {
    await ioc?.stop();
  });

  it.each(TIMED)('%s: 20 rounds at 1 and 10,000 doubles, every round its own update', async (name) => {
    const workload = { sizes: [1, 10_000], elementType: 'double', samplesPerSize: 20 };
    const run = await runLatency({ client: findClient(name)!, python, env: ioc.env, prefix: ioc.prefix, workload });
    expect(run.error).toBeUndefined();
    expect(run.ok).toBe(true);
    expect(run.points.map((p) => [p.elements, p.bytes, p.updates])).toEqual([
      [1, 8, 20],
      [10_000, 80_000, 20],
    ]);
    for (const p of run.points) {
      expect(p.minMs).toBeGreaterThan(0);
      expect(p.minMs).toBeLessThanOrEqual(p.p50Ms);
      expect(p.p50Ms).toBeLessThanOrEqual(p.p99Ms);
      expect(p.p99Ms).toBeLessThanOrEqual(p.maxMs);
      // The IOC stamps the update after the put left the client and before the callback (one host):
      // each one-way time lies inside its round trip. The one-way time reads the wall clock and the
      // round trip the monotonic one (the runner's timeOrigin + now()), which can differ by tens of
      // microseconds either way: a loaded run once had medians of 0.366 one way and 0.349 ms round
      // trip, another a one-way median of -0.024 ms.
      expect(p.oneWayP50Ms!).toBeGreaterThan(-0.1);
      expect(p.oneWayP50Ms!).toBeLessThanOrEqual(p.p50Ms + 0.1);
      expect(p.p50Ms).toBeLessThan(1000);
    }
  });
});

it('the command line: the byte-array case, a client that cannot put says why, exit code 1', async () => {
  const r = await runCli(
    ['latency', '--client', 'c-libca,pyepics-ca', '--sizes', '10,1000', '--type', 'char', '--count', '10', '--format', 'json'],
    { timeoutMs: 120_000 },
  );
  expect(r.code).toBe(1);
  const out = JSON.parse(r.stdout) as {
    workload: { elementType: string };
    runs: { client: string; ok: boolean; error?: string; points: LatencyPoint[] }[];
  };
  expect(out.workload.elementType).toBe('char');
  const [c, other] = out.runs;
  expect(c!.ok).toBe(true);
  expect(c!.points.map((p) => p.bytes)).toEqual([10, 1000]);
  expect(other!.ok).toBe(false);
  expect(other!.error).toMatch(/does not put/);
}, 150_000);

it('fits the fixed cost and MB/s of p50 against bytes', () => {
  // 0.35 ms fixed and 30 MB/s (30,000 bytes per ms), the ADO bridge study's per-element figures.
  const points = [12, 1000, 100_000, 1_000_000].map((bytes) => ({ bytes, p50Ms: 0.35 + bytes / 30_000 }) as LatencyPoint);
  const fit = fitLatency(points, (p) => p.p50Ms)!;
  expect(fit.fixedMs).toBeCloseTo(0.35, 6);
  expect(fit.mbPerS).toBeCloseTo(30, 6);
  expect(fitLatency(points.slice(0, 1), (p) => p.p50Ms)).toBeUndefined();
});

it('bench latency: JSON that the schema accepts, one row per client, fits present', async () => {
  const r = await runCli(
    [
      'bench',
      'latency',
      '--clients',
      'node,pyepics-nonumpy',
      '--latency-sizes',
      '1,100000',
      '--latency-count',
      '5',
      '--repeat',
      '1',
      '--no-keep',
      '--format',
      'json',
    ],
    { timeoutMs: 120_000 },
  );
  expect(r.code).toBe(0);
  const json = JSON.parse(r.stdout) as BenchResults;
  expect(schemaErrors('bench', json)).toEqual([]);
  expect(json.latency!.runs.map((x) => [x.client, x.ok])).toEqual([
    ['node', true],
    ['pyepics-nonumpy', false],
  ]);
  // 800 kB takes longer than 8 bytes on any machine: a line with a positive slope through both.
  const fit = json.latency!.runs[0]!.fit!.roundTrip!;
  expect(fit.fixedMs).toBeGreaterThan(0);
  expect(fit.mbPerS).toBeGreaterThan(0);
}, 150_000);
