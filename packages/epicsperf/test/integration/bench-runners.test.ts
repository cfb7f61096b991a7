// Every client's runner against the built-in IOC (softioc) at a small size (helpers/runner-checks.ts:
// a snapshot with missing names, a monitor whose every sample is checked, arrays checked element
// by element); plus runners that crash or hang, and the snapshot referee.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { CLIENTS, clientStatusList, prepareClients, type ClientSpec } from '../../src/clients/index.js';
import { runSnapshot } from '../../src/bench/snapshot.js';
import { runnerChecks } from '../helpers/runner-checks.js';

let ioc: Ioc;
let python: string;
const available = new Map<string, boolean>();

beforeAll(async () => {
  python = await prepareClients(CLIENTS, true);
  const { statuses } = await clientStatusList();
  for (const s of statuses) available.set(s.name, s.available);
  ioc = await startIoc({ records: 20, rate: 10, arrayElements: 0 });
  // The runners build on first use (minutes for the Rust ones): the hook waits for them.
}, 600_000);
afterAll(async () => {
  await ioc?.stop();
});

it.each(CLIENTS.map((c) => c.name))('runner %s is available here', (name) => {
  expect(available.get(name)).toBe(true);
});

runnerChecks('softioc', () => python);

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
