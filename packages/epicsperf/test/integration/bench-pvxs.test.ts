// The c-pvxs runner's build: made on first use from the wheels, and without a C++ compiler a
// client row that says why instead of a crash.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../src/pyenv/index.js';
import { buildPvxsRunner, pvxsRunnerPath } from '../../src/toolchains/cxxlib.js';
import { clientStatuses } from '../../src/clients/index.js';
import { doctor } from '../../src/doctor.js';

describe('c-pvxs build', () => {
  const saved = { home: process.env.EPICSPERF_HOME, cxx: process.env.CXX };
  let dir: string | undefined;
  afterEach(() => {
    for (const [k, v] of [
      ['EPICSPERF_HOME', saved.home],
      ['CXX', saved.cxx],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is built on first use into an empty home, and the build is reused after', async () => {
    const python = await ensurePythonEnv();
    dir = mkdtempSync(join(tmpdir(), 'epicsperf-pvxs-'));
    process.env.EPICSPERF_HOME = dir;
    const first = await buildPvxsRunner(python);
    expect(first).toEqual({ path: join(dir, 'bin', 'epicsperf-pvxs') });
    expect(existsSync(pvxsRunnerPath())).toBe(true);
    const t0 = performance.now();
    expect(await buildPvxsRunner(python)).toEqual(first);
    expect(performance.now() - t0).toBeLessThan(3000); // no second compile
  }, 120_000);

  it('without a C++ compiler the client is unavailable, with the reason', async () => {
    const python = await ensurePythonEnv();
    dir = mkdtempSync(join(tmpdir(), 'epicsperf-pvxs-'));
    process.env.EPICSPERF_HOME = dir;
    process.env.CXX = join(dir, 'no-such-c++');
    const r = await buildPvxsRunner(python);
    expect(r).toEqual({ error: `no C++ compiler (${process.env.CXX} not found)` });
    const status = clientStatuses(await doctor()).find((s) => s.name === 'c-pvxs')!;
    expect(status.available).toBe(false);
    expect(status.reason).toBe(`no C++ compiler (${process.env.CXX} not found)`);
  });
});
