// The CLI's basics through the real binary: help, version, doctor, logging flags, and setup
// failures (no Python, a failing pip) as one-line errors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from 'epicsperf-testkit/cli';

describe('epicsperf CLI basics', () => {
  it('--help lists the commands and --version prints the package version', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const cmd of [
      'snapshot',
      'monitor',
      'bench',
      'latency',
      'capture',
      'results',
      'report',
      'compare',
      'clients',
      'setup',
      'doctor',
      'ioc',
    ])
      expect(help.stdout).toMatch(new RegExp(`\\n\\s+${cmd} `));
    const v = await runCli(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('doctor reports the machine and every client library, as a table and as JSON', async () => {
    const table = await runCli(['doctor']);
    expect(table.code).toBe(0);
    for (const k of ['node', 'python', 'cpu', 'memory', 'pyepics', 'caproto', 'p4p', 'pvapy', 'epics-tca'])
      expect(table.stdout).toMatch(new RegExp(`^${k}\\s`, 'm'));
    const json = await runCli(['doctor', '--format', 'json']);
    const r = JSON.parse(json.stdout) as {
      node: string;
      cpu: { cores: number };
      python: { version: string };
      libraries: Record<string, { version?: string }>;
    };
    expect(r.node).toBe(process.version);
    expect(r.cpu.cores).toBeGreaterThan(0);
    expect(r.python.version).toMatch(/^3\./);
    expect(r.libraries.softioc!.version).toBe('4.7.2');
    expect(r.libraries.pvapy!.version).toBe('5.6.0');
  });

  it('logs go to stderr, readable by default and JSON with --log-json; stdout stays clean', async () => {
    const readable = await runCli(['--log-level', 'info', 'snapshot', '-', '--ioc', 'builtin', '--format', 'json'], {
      input: 'TEST:KIND:LONG\n',
    });
    expect(readable.code).toBe(0);
    expect(JSON.parse(readable.stdout).answered).toBe(1);
    expect(readable.stderr).toMatch(/INFO\s+\[ioc\] IOC ready/);
    const json = await runCli(['--log-level', 'info', '--log-json', 'snapshot', '-', '--ioc', 'builtin', '--format', 'json'], {
      input: 'TEST:KIND:LONG\n',
    });
    const line = json.stderr.split('\n').find((l) => l.includes('IOC ready'));
    expect(JSON.parse(line!)).toMatchObject({ level: 30, name: 'ioc', msg: 'IOC ready' });
  });

  it('setup --clients: an unknown client is a one-line usage error', async () => {
    const r = await runCli(['setup', '--clients', 'pyepics,nope']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^epicsperf: error: unknown client "nope": choose from node, /);
  });

  it('setup without Python says what to install, in one line', async () => {
    const home = mkdtempSync(join(tmpdir(), 'epicsperf-home-'));
    try {
      const r = await runCli(['setup'], { env: { EPICSPERF_HOME: home, EPICSPERF_BASE_PYTHON: '/nonexistent/python3' } });
      expect(r.code).toBe(1);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('epicsperf: error'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/Python 3 .* was not found: install python3/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('a pip failure is a one-line error naming pip, and nothing is left half-ready', async () => {
    const home = mkdtempSync(join(tmpdir(), 'epicsperf-home-'));
    try {
      // pip pointed at an index on a closed loopback port fails at once, as on a machine without the registry.
      const env = {
        EPICSPERF_HOME: home,
        PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
        PIP_RETRIES: '0',
        PIP_TIMEOUT: '1',
        PIP_NO_CACHE_DIR: '1',
      };
      // Only the Python environment: the Java and Rust builds would take the suite's cores.
      const r = await runCli(['setup', '--clients', 'pyepics'], { env, timeoutMs: 120_000 });
      expect(r.code).toBe(1);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('epicsperf: error'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/pip install failed/);
      const again = await runCli(['doctor', '--format', 'json'], { env: { EPICSPERF_HOME: home } });
      expect(JSON.parse(again.stdout).python.ready).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
