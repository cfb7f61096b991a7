// The runners of other languages, one table (clients/index.ts) keyed by what the declarations name
// (`c`: libca, pvxs; `java`; `rust`): which builds a set of clients asks for, in what order and
// with which interpreter, how each client's runner starts, and what `clients` says of one not
// built. The builds themselves are stood in for; nothing is compiled.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const { builds, built } = vi.hoisted(() => {
  const builds: string[] = [];
  /** A build stood in for: it says what it was asked, and gives `result`. */
  const built = <T>(line: string, result: T): T => {
    builds.push(line);
    return result;
  };
  return { builds, built };
});
vi.mock(import('../../src/pyenv/index.js'), async (original) => ({
  ...(await original()),
  ensurePythonEnv: async () => '/venv/bin/python',
}));
vi.mock(import('../../src/toolchains/clib.js'), async (original) => ({
  ...(await original()),
  buildCRunner: async (python: string) => built(`libca ${python}`, { path: 'c' }),
}));
vi.mock(import('../../src/toolchains/cxxlib.js'), async (original) => ({
  ...(await original()),
  buildPvxsRunner: async (python: string) => built(`pvxs ${python}`, { error: 'no C++ compiler' }),
}));
vi.mock(import('../../src/toolchains/jvm.js'), async (original) => ({
  ...(await original()),
  buildJavaRunners: async () => built('java', { path: 'j' }),
}));
vi.mock(import('../../src/toolchains/cargo.js'), async (original) => ({
  ...(await original()),
  buildRustRunners: async () => built('rust', { path: 'r' }),
}));

const home = mkdtempSync(join(tmpdir(), 'epicsperf-clients-built-'));
vi.stubEnv('EPICSPERF_HOME', home);
vi.stubEnv('EPICSPERF_RUST_PROFILE', '');
const { checkBuiltRunners, CLIENTS, clientStatuses, findClient, prepareClients, prepareRunners, runnerCommand } = await import(
  '../../src/clients/index.js'
);
const { cRunnerPath } = await import('../../src/toolchains/clib.js');
const { pvxsRunnerPath } = await import('../../src/toolchains/cxxlib.js');
const { javaRunnerCommand, javaRunnersDir } = await import('../../src/toolchains/jvm.js');
const { rustRunnerCommand, rustRunnersDir } = await import('../../src/toolchains/cargo.js');

const spec = (name: string) => findClient(name)!;
beforeEach(() => {
  builds.length = 0;
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('the built runners', () => {
  it('builds what the clients name, those on the Python wheels with its interpreter, each once', async () => {
    expect(await prepareClients([spec('node'), spec('pyepics')], false)).toBe('/venv/bin/python');
    expect(builds).toEqual([]);
    await prepareClients([spec('caget-procs'), spec('c-libca')], false);
    expect(builds).toEqual(['libca /venv/bin/python']);
    builds.length = 0;
    await prepareClients([spec('java-caj'), spec('java-corepva'), spec('c-pvxs')], false);
    expect(builds.sort()).toEqual(['java', 'pvxs /venv/bin/python']);
    builds.length = 0;
    // The referee's runner, for the checks.
    expect(await prepareClients([spec('node')], false, true)).toBe('/venv/bin/python');
    expect(builds).toEqual(['libca /venv/bin/python']);
    builds.length = 0;
    // No Python environment asked for, and none needed: the system's interpreter.
    expect(await prepareClients([spec('rust-ca')], false)).toBe('python3');
    expect(builds).toEqual(['rust']);
  });

  it("setup's list: every build, in the table's order, with its result", async () => {
    const { python, built } = await prepareRunners({ python: false, clients: CLIENTS });
    expect(python).toBe('python3');
    expect(built).toEqual([
      { name: 'libca', title: 'C runner (c-libca)', result: { path: 'c' } },
      { name: 'pvxs', title: 'C++ runner (c-pvxs)', result: { error: 'no C++ compiler' } },
      { name: 'java', title: 'Java runners', result: { path: 'j' } },
      { name: 'rust', title: 'Rust runners', result: { path: 'r' } },
    ]);
  });

  it('starts each runner from its build', () => {
    expect(runnerCommand(spec('c-libca'), 'py', 'monitor')).toEqual({ command: cRunnerPath(), args: [] });
    expect(runnerCommand(spec('c-pvxs'), 'py', 'monitor')).toEqual({ command: pvxsRunnerPath(), args: [] });
    expect(runnerCommand(spec('java-caj'), 'py', 'monitor')).toEqual(javaRunnerCommand('epicsperf.CajRunner'));
    expect(runnerCommand(spec('rust-pva'), 'py', 'monitor')).toEqual(rustRunnerCommand('epicsperf-rust-pva'));
    expect(runnerCommand(spec('caget-procs'), 'py', 'snapshot').args.slice(-2)).toEqual(['--caget', cRunnerPath()]);
  });

  it('says why a client is not available: the build that failed, else what it needs; its version once built', () => {
    const report = {
      libraries: { epicscorelibs: { version: '7.0.7.99' }, pvxslibs: { version: '1.3.1' }, 'epics-ca-rs': { version: '0.33.0' } },
    };
    const status = (name: string) => clientStatuses(report as never).find((s) => s.name === name);
    const setup = 'run `npx epicsperf setup`';
    expect(status('c-libca')).toEqual({
      name: 'c-libca',
      available: false,
      reason: `the C runner is not built (needs a C compiler; ${setup})`,
    });
    expect(status('caget-procs')?.reason).toBe(`the C runner is not built (needs a C compiler; ${setup})`);
    expect(status('c-pvxs')?.reason).toBe(`the pvxs runner is not built (needs a C++ compiler; ${setup})`);
    expect(status('java-caj')?.reason).toBe(`the Java runners are not built (needs a JDK and Maven; ${setup})`);
    expect(status('rust-ca')?.reason).toBe(`the Rust runners are not built (needs cargo; ${setup})`);
    mkdirSync(join(home, 'bin'), { recursive: true });
    writeFileSync(`${pvxsRunnerPath()}.error`, 'pvxslibs is not installed in python3\n');
    expect(status('c-pvxs')?.reason).toBe('pvxslibs is not installed in python3');
    writeFileSync(cRunnerPath(), '');
    mkdirSync(rustRunnersDir(), { recursive: true });
    expect(status('c-libca')).toEqual({ name: 'c-libca', available: true, version: 'libca 7.0.7.99' });
    expect(status('caget-procs')).toEqual({ name: 'caget-procs', available: true, version: 'libca 7.0.7.99' });
    expect(status('rust-ca')).toEqual({ name: 'rust-ca', available: true, version: 'epics-ca-rs 0.33.0' });
    expect(javaRunnersDir().startsWith(home)).toBe(true);
  });

  it('refuses a declaration naming a runner no build makes', () => {
    expect(() => checkBuiltRunners(CLIENTS)).not.toThrow();
    expect(() => checkBuiltRunners([{ ...spec('c-libca'), name: 'c-other', run: { c: 'other' } }])).toThrow(
      'clients.json: client "c-other": no runner other is built (libca, pvxs, java, rust)',
    );
    expect(() => checkBuiltRunners([{ ...spec('caget-procs'), run: { node: 'caget-procs.js', caget: 'nope' } }])).toThrow('no runner nope');
  });
});
