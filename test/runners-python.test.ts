// The runners of the other clients (the Python ones, c-libca and epics-tca) against the built-in
// IOC through the orchestrator's RunnerProcess: snapshot with missing names, monitor 20 x 10.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../src/ioc/index.js';
import { ensurePythonEnv } from '../src/pyenv/index.js';
import { findClient, runnerCommand } from '../src/bench/clients.js';
import { buildCRunner } from '../src/bench/clib.js';
import { RunnerProcess } from '../src/bench/runner.js';

const PYTHON_CLIENTS = ['pyepics', 'pyepics-ca', 'pyepics-threaded', 'caproto', 'aioca', 'cothread', 'p4p', 'pvapy'];
const COUNTERS = 20;
const MISSING = 5;
const SAMPLES = 10;
const TIMEOUT_MS = 1000;

let ioc: Ioc;
let python: string;
let dir: string;
let snapshotNames: string;
let monitorNames: string;
let cRunner: { path: string } | { error: string };

beforeAll(async () => {
  python = await ensurePythonEnv();
  ioc = await startIoc({ records: COUNTERS, rate: 10, arrayElements: 0 });
  dir = mkdtempSync(join(tmpdir(), 'epicsperf-runners-'));
  const counters = Array.from({ length: COUNTERS }, (_, i) => `TEST:CALC${i + 1}`);
  const missing = Array.from({ length: MISSING }, (_, i) => `TEST:MISSING${i + 1}`);
  snapshotNames = join(dir, 'snapshot.txt');
  monitorNames = join(dir, 'monitor.txt');
  // Missing names spread among the counters, a string PV and an array PV at the end.
  const mixed = counters.flatMap((n, i) => (i % 4 === 3 ? [n, missing[(i - 3) / 4]!] : [n]));
  writeFileSync(snapshotNames, [...mixed, 'TEST:KIND:STRING', 'TEST:KIND:ARR:DOUBLE'].join('\n') + '\n');
  writeFileSync(monitorNames, counters.join('\n') + '\n');
  cRunner = await buildCRunner(python);
});

afterAll(async () => {
  await ioc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function start(client: string, args: string[]): RunnerProcess {
  const spec = findClient(client);
  if (!spec) throw new Error(`unknown client ${client}`);
  const cmd = runnerCommand(spec, python);
  return new RunnerProcess(cmd.command, [...cmd.args, ...args], { ...ioc.env });
}

interface Result {
  ok: boolean;
  value?: unknown;
  severity?: number;
  status?: number;
  timestamp?: number;
  error?: string;
  elapsedMs: number;
}

async function snapshot(client: string): Promise<{ results: Result[]; wallMs: number; ready: Record<string, unknown> }> {
  const r = start(client, ['snapshot', '--names', snapshotNames, '--timeout-ms', String(TIMEOUT_MS)]);
  try {
    const ready = await r.next('ready', 30_000);
    const t0 = performance.now();
    r.send('start');
    await r.next('done', 20_000);
    const wallMs = performance.now() - t0;
    r.send('ship');
    const ev = await r.next('results', 10_000);
    await r.finish();
    return { results: JSON.parse(ev.payload!.toString('utf8')) as Result[], wallMs, ready };
  } finally {
    await r.kill();
  }
}

interface Sample {
  pv: number;
  severity: number;
  value: number;
  stamp: number;
  received: number;
}

async function monitor(client: string): Promise<{ samples: Sample[]; connected: number }> {
  const r = start(client, ['monitor', '--names', monitorNames, '--samples', String(SAMPLES)]);
  try {
    await r.next('ready', 30_000);
    r.send('start');
    const connected = await r.next('connected', 20_000);
    await r.next('complete', 20_000);
    r.send('ship');
    const ev = await r.next('samples', 10_000);
    await r.finish();
    const p = ev.payload!;
    expect(p.length).toBe(32 * Number(ev.count));
    const samples: Sample[] = [];
    for (let o = 0; o < p.length; o += 32) {
      samples.push({
        pv: p.readUInt32LE(o),
        severity: p.readInt16LE(o + 4),
        value: p.readDoubleLE(o + 8),
        stamp: p.readDoubleLE(o + 16),
        received: p.readDoubleLE(o + 24),
      });
    }
    return { samples, connected: Number(connected.count) };
  } finally {
    await r.kill();
  }
}

function checkSnapshot(results: Result[]): void {
  expect(results).toHaveLength(COUNTERS + MISSING + 2);
  const failed = results.filter((x) => !x.ok);
  expect(failed).toHaveLength(MISSING);
  for (const f of failed) expect(f.error).toBe('not found');
  const now = Date.now() / 1000;
  for (const x of results.filter((y) => y.ok && typeof y.value === 'number')) {
    expect(x.severity).toBe(1); // the counters are in MINOR alarm
    expect(Math.abs(x.timestamp! - now)).toBeLessThan(60);
  }
  expect(results.at(-2)!.value).toBe('hello epics');
  expect(results.at(-1)!.value).toEqual([0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25]);
}

function checkMonitor(samples: Sample[], connected: number): void {
  expect(connected).toBe(COUNTERS);
  expect(samples).toHaveLength(COUNTERS * SAMPLES);
  for (let pv = 0; pv < COUNTERS; pv++) {
    const s = samples.filter((x) => x.pv === pv);
    expect(s).toHaveLength(SAMPLES);
    for (let k = 1; k < s.length; k++) {
      expect(s[k]!.value - s[k - 1]!.value).toBe(1);
      expect(s[k]!.stamp).toBeGreaterThan(s[k - 1]!.stamp);
    }
    for (const x of s) {
      expect(x.severity).toBe(1);
      expect(x.received).toBeGreaterThanOrEqual(x.stamp - 1);
    }
  }
}

describe.each(PYTHON_CLIENTS)('python runner %s', (client) => {
  it('snapshot: counters answer, missing names fail in about the timeout', async () => {
    const { results, wallMs, ready } = await snapshot(client);
    expect(ready.client).toBe(client);
    checkSnapshot(results);
    // pyepics reads one PV after another: each missing name costs a whole timeout.
    const budget = client === 'pyepics' ? MISSING * TIMEOUT_MS + 3000 : 2 * TIMEOUT_MS + 1500;
    expect(wallMs).toBeLessThan(budget);
    expect(wallMs).toBeGreaterThan(TIMEOUT_MS * 0.9);
  });

  it(`monitor: ${COUNTERS} counters x ${SAMPLES} samples, steps of 1, MINOR`, async () => {
    const { samples, connected } = await monitor(client);
    checkMonitor(samples, connected);
  });
});

describe('c-libca runner', () => {
  const skip = () => 'error' in cRunner;

  it('snapshot', async (ctx) => {
    if (skip()) ctx.skip();
    const { results, wallMs } = await snapshot('c-libca');
    checkSnapshot(results);
    expect(wallMs).toBeLessThan(TIMEOUT_MS + 1000);
  });

  it('monitor', async (ctx) => {
    if (skip()) ctx.skip();
    const { samples, connected } = await monitor('c-libca');
    checkMonitor(samples, connected);
  });
});

describe('epics-tca runner', () => {
  const built = () => existsSync(runnerCommand(findClient('epics-tca')!, python).args[0]!);

  it('snapshot', async (ctx) => {
    if (!built()) ctx.skip();
    const { results, wallMs } = await snapshot('epics-tca');
    checkSnapshot(results);
    expect(wallMs).toBeLessThan(2 * TIMEOUT_MS + 1500);
  });

  it('monitor', async (ctx) => {
    if (!built()) ctx.skip();
    const { samples, connected } = await monitor('epics-tca');
    checkMonitor(samples, connected);
  });
});
