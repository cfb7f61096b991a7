// A runner names its client in its `ready` event; the orchestrator checks it against the client it
// started: one that names another fails, killed, and its row says why. Runs small Node processes
// that speak the runners' protocol on fd 3 (docs/runners.md), nothing else.
import { describe, expect, it } from 'vitest';
import { RunnerProcess, type Runner } from '../../src/launch/process.js';
import { runSession } from '../../src/bench/session.js';
import { findClient } from '../../src/clients/index.js';
import { LocalHost } from '../../src/hosts/local-host.js';
import type { Host, RunnerRequest } from '../../src/hosts/host.js';

/** A runner that says it is `says` when ready, then connects when told to start and waits for exit. */
function fakeRunner(says: string | undefined, startedFor?: string): RunnerProcess {
  const script = `
    const fs = require('node:fs');
    const emit = (e) => fs.writeSync(3, JSON.stringify(e) + '\\n');
    emit(${JSON.stringify({ ev: 'ready', ...(says !== undefined && { client: says }), version: '1.0' })});
    process.stdin.on('data', (d) => {
      for (const cmd of String(d).split('\\n')) {
        if (cmd === 'start') emit({ ev: 'connected', count: 0 });
        if (cmd === 'exit') process.exit(0);
      }
    });
    process.stdin.on('end', () => process.exit(0));`;
  return new RunnerProcess(process.execPath, ['-e', script], {}, startedFor);
}

/** A host whose runners are `fakeRunner`s that say they are `says`. */
function hostSaying(says: string): Host {
  return {
    name: 'fake',
    address: 'here',
    prepare: async () => {},
    startRunner: (r: RunnerRequest): Runner => fakeRunner(says, r.client),
    startIoc: () => Promise.reject(new Error('no IOC here')),
    doctor: () => Promise.reject(new Error('no doctor here')),
    close: async () => {},
  };
}

const session = (host: Host) =>
  runSession(
    { client: findClient('node-worker')!, python: 'python3', host, env: {}, task: 'latency', names: ['X'], args: [] },
    { ok: false } as { ok: boolean; version?: string; error?: string },
    async () => {},
  );

describe("the runner's ready event", () => {
  it('naming the client started: the run goes on', async () => {
    const runner = fakeRunner('node-worker', 'node-worker');
    expect((await runner.next('ready', 10_000)).version).toBe('1.0');
    await runner.kill();
    expect(await session(hostSaying('node-worker'))).toEqual({ ok: false, version: '1.0', host: 'fake' });
  });

  it("naming another client, or none: the runner is killed and the row's error says so", async () => {
    const runner = fakeRunner('node', 'node-worker');
    await expect(runner.next('ready', 10_000)).rejects.toThrow('the runner started for node-worker said it is "node" when ready');
    expect((await runner.exited).signal).toBe('SIGKILL');
    const row = await session(hostSaying('node'));
    expect(row.error).toBe('the runner started for node-worker said it is "node" when ready');
    expect(row.version).toBeUndefined();
    await expect(fakeRunner(undefined, 'pyepics').next('ready', 10_000)).rejects.toThrow('started for pyepics said it is null');
  });

  it('is checked for the client each host starts', async () => {
    const runner = new LocalHost('python3').startRunner({ client: 'node', task: 'snapshot', names: [], args: [], env: {} });
    expect(runner.client).toBe('node');
    await runner.kill();
    // A process that stands for no client (an IOC's) is not checked.
    const unnamed = fakeRunner('anything');
    expect((await unnamed.next('ready', 10_000)).client).toBe('anything');
    await unnamed.kill();
  });
});
