// Every client's runner against the built-in IOC at a small size, on both of its servers (softioc,
// and this project's server with --server node): a snapshot with missing names, a monitor whose
// every sample is checked, arrays checked element by element; plus runners that crash or hang.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { CLIENTS, clientStatusList, prepareClients, type ClientSpec } from '../../src/clients/index.js';
import { runSnapshot } from '../../src/bench/snapshot.js';
import { runMonitor } from '../../src/bench/monitor.js';

let ioc: Ioc;
let python: string;
const available = new Map<string, boolean>();

beforeAll(async () => {
  python = await prepareClients(CLIENTS, true);
  const { statuses } = await clientStatusList();
  for (const s of statuses) available.set(s.name, s.available);
  ioc = await startIoc({ records: 20, rate: 10, arrayElements: 0 });
});
afterAll(async () => {
  await ioc?.stop();
});

it.each(CLIENTS.map((c) => c.name))('runner %s is available here', (name) => {
  expect(available.get(name)).toBe(true);
});

describe.each(['softioc', 'node'] as const)('on %s', (server) => {
  let ioc: Ioc;
  beforeAll(async () => {
    ioc = await startIoc({ records: 20, rate: 10, arrayElements: 0, server });
  });
  afterAll(async () => {
    await ioc?.stop();
  });

  describe.each(CLIENTS.map((c) => [c.name, c] as const))('runner %s', (_name, client) => {
    it.skipIf(!client.tasks.includes('snapshot'))(
      'snapshot: 20 counters, a string and an array answer with checked values, 3 missing names fail in about the timeout',
      async () => {
        const names = [
          ...ioc.counterNames().slice(0, 10),
          'TEST:NOPE1',
          ...ioc.counterNames().slice(10),
          'TEST:NOPE2',
          'TEST:NOPE3',
          'TEST:KIND:STRING',
          'TEST:KIND:ARR:DOUBLE',
        ];
        const run = await runSnapshot({ client, python, env: ioc.env, names, timeoutMs: 1000 });
        expect(run.error).toBeUndefined();
        expect(run.answered).toBe(22);
        expect(run.failed).toBe(3);
        expect(run.wrong).toBe(0);
        expect(run.rows.filter((r) => !r.ok).map((r) => r.name)).toEqual(['TEST:NOPE1', 'TEST:NOPE2', 'TEST:NOPE3']);
        const counters = run.rows.filter((x) => x.ok && x.name.startsWith('TEST:CALC'));
        expect(counters).toHaveLength(20);
        for (const r of counters) {
          expect(typeof r.value).toBe('number');
          expect(r.correct).toBe(true);
          if (r.severity !== undefined) expect(r.severity).toBe(1);
        }
        const byName = new Map(run.rows.map((r) => [r.name, r]));
        expect(byName.get('TEST:KIND:STRING')!.value).toBe('hello epics');
        expect(byName.get('TEST:KIND:ARR:DOUBLE')!.value).toEqual([0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25]);
        expect(run.wallMs!).toBeGreaterThan(900);
        // Bounded, not timed: a missing name must not hold the batch far past its 1 s timeout (a
        // loaded 2-core machine took 6 s for caget-procs and 8.8 s for pyepics once; a hang is 30 s).
        expect(run.wallMs!).toBeLessThan(12_000);
      },
    );

    it.skipIf(!client.tasks.includes('monitor'))('monitor: 20 counters x 10 samples, every sample checked', async () => {
      const run = await runMonitor({
        client,
        python,
        env: ioc.env,
        names: ioc.counterNames(),
        samples: 10,
        rate: 10,
        iocMeter: ioc.meter,
        warmupMs: 200,
      });
      expect(run.error).toBeUndefined();
      expect(run.check!.samples).toBe(200);
      expect(run.check!.ok).toBe(true);
      expect(run.connectMs!).toBeGreaterThan(0);
      expect(run.peakRssMb!).toBeGreaterThan(1);
      expect(run.cpuPercent?.samples.length ?? 0).toBeGreaterThanOrEqual(1);
    });
  });

  describe('array task', () => {
    let arrayIoc: Ioc;
    beforeAll(async () => {
      arrayIoc = await startIoc({ records: 1, rate: 0, arrayElements: 100_000, arrayRate: 20, server });
    });
    afterAll(async () => {
      await arrayIoc?.stop();
    });

    const arrayClients = CLIENTS.filter((c) => c.tasks.includes('array'));
    it.each(arrayClients.map((c) => [c.name, c] as const))(
      '%s: 5 updates of 100,000 elements, every element checked, none corrupt',
      async (_name, client) => {
        const run = await runMonitor({
          task: 'array',
          client,
          python,
          env: arrayIoc.env,
          names: [arrayIoc.prefix + 'ARRAY'],
          samples: 5,
          rate: 20,
          warmupMs: 200,
          array: { elements: 100_000, checkAll: true, iocStats: () => arrayIoc.stats() },
        });
        expect(run.error).toBeUndefined();
        expect(run.ok).toBe(true);
        expect(run.array!.updates).toBe(5);
        expect(run.array!.elements).toBe(100_000);
        expect(run.array!.corrupt).toBe(0);
        expect(run.array!.server!.updatesPerSecond).toBeGreaterThan(0);
      },
    );
  });
});

/** A client no declaration has, run as the Python driver would run it (it says it does not know it). */
const spec = (name: string): ClientSpec => ({
  name,
  runtime: 'python',
  protocol: 'CA',
  tasks: ['snapshot'],
  description: 'test',
  library: 'x',
  run: { python: name },
});

describe('runners that misbehave', () => {
  it('a runner that crashes gives a row that says why', async () => {
    // The real Python driver asked for a client it does not have: it exits with an error.
    const run = await runSnapshot({ client: spec('no-such-client'), python, env: ioc.env, names: ['TEST:CALC1'], timeoutMs: 500 });
    expect(run.answered).toBe(0);
    expect(run.error).toMatch(/no-such-client/);
  });

  it('a runner that hangs is killed at its deadline and reported', async () => {
    // An interpreter stand-in that never says ready (a real runner cannot be made to hang on purpose).
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-hang-'));
    const hang = join(dir, 'python');
    writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const t0 = Date.now();
    const run = await runSnapshot({
      client: spec('hang'),
      python: hang,
      env: ioc.env,
      names: ['TEST:CALC1'],
      timeoutMs: 500,
      readyTimeoutMs: 1500,
    });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(run.error).toMatch(/did not reach ready within 2 s and was killed/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the snapshot referee', () => {
  // A runner that answers every name, the missing one too, with a made-up value; it speaks the
  // runner protocol (docs/runners.md) and stands in for the interpreter of a Python client.
  const LIAR = `#!${process.execPath}
const { readFileSync, writeSync } = require('node:fs');
const names = readFileSync(process.argv[process.argv.indexOf('--names') + 1], 'utf8').split('\\n').filter(Boolean);
const emit = (ev, payload) => { writeSync(3, JSON.stringify(payload ? { ...ev, bytes: payload.length } : ev) + '\\n'); if (payload) writeSync(3, payload); };
emit({ ev: 'ready', client: 'liar', version: '0' });
require('node:readline').createInterface({ input: process.stdin }).on('line', (cmd) => {
  if (cmd === 'start') emit({ ev: 'done' });
  if (cmd === 'ship') emit({ ev: 'results' }, Buffer.from(JSON.stringify(names.map((n) => ({ ok: true, value: n.endsWith('CALC2') ? 12345 : 7, elapsedMs: 1 })))));
  if (cmd === 'exit') process.exit(0);
});
`;
  let dir: string;
  let liar: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'epicsperf-liar-'));
    liar = join(dir, 'python');
    writeFileSync(liar, LIAR, { mode: 0o755 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the C runner on libca, and catches a wrong value and an answer for a name the IOC does not serve', async () => {
    // TEST:KIND:LONG holds 42 and TEST:CALC2 counts from 0 at 10 Hz: neither can be 7 or 12345.
    const names = ['TEST:KIND:LONG', 'TEST:CALC2', 'TEST:NOPE'];
    const run = await runSnapshot({ client: spec('liar'), python: liar, env: ioc.env, names, timeoutMs: 500 });
    expect(run.unchecked).toBeUndefined();
    expect(run.answered).toBe(3);
    expect(run.rows.map((r) => r.correct)).toEqual([false, false, false]);
    expect(run.wrong).toBe(3);
    expect(run.ok).toBe(false);
  });

  it('on runs that share what it found unserved, waits on a missing name once and still catches every wrong answer', async () => {
    const names = ['TEST:KIND:LONG', 'TEST:CALC2', 'TEST:NOPE'];
    const unservedNames = new Set<string>();
    const timed = async () => {
      const t0 = performance.now();
      const run = await runSnapshot({ client: spec('liar'), python: liar, env: ioc.env, names, timeoutMs: 1500, unservedNames });
      return { run, ms: performance.now() - t0 };
    };
    const first = await timed();
    expect([...unservedNames]).toEqual(['TEST:NOPE']);
    const second = await timed();
    for (const { run } of [first, second]) {
      expect(run.unchecked).toBeUndefined();
      expect(run.rows.map((r) => r.correct)).toEqual([false, false, false]);
    }
    // The first run's referee waited its 1.5 s timeout on TEST:NOPE before the run; the second's did not.
    expect(first.ms - second.ms).toBeGreaterThan(1000);
  });

  it('says the values were not checked when the referee cannot run, and grades nothing', async () => {
    const home = process.env.EPICSPERF_HOME;
    process.env.EPICSPERF_HOME = dir; // no C runner there
    try {
      const run = await runSnapshot({ client: spec('liar'), python: liar, env: ioc.env, names: ['TEST:KIND:LONG'], timeoutMs: 500 });
      expect(run.unchecked).toMatch(/the referee \(c-libca\) could not read/);
      expect(run.rows[0]!.correct).toBeUndefined();
      expect(run.wrong).toBe(0);
    } finally {
      if (home === undefined) delete process.env.EPICSPERF_HOME;
      else process.env.EPICSPERF_HOME = home;
    }
  });
});
