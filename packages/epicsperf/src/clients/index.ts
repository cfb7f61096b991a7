// The clients epicsperf can measure (declared in clients.json, read by registry.ts): how to start
// each one's runner, whether it is available here (with the reason when it is not), and making
// them runnable (the Python environment; the C, C++, Java and Rust runners built on first use).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../home.js';
import { ensurePythonEnv, pythonEnvStatus, pythonModule } from '../pyenv/index.js';
import { doctor, packageVersion } from '../doctor.js';
import type { EnvironmentReport } from '../results/index.js';
import { stopBuilds } from '../toolchains/built.js';
import { buildCRunner, cBuildError, cRunnerPath } from '../toolchains/clib.js';
import { buildPvxsRunner, pvxsBuildError, pvxsRunnerPath } from '../toolchains/cxxlib.js';
import { buildJavaRunners, javaBuildError, javaRunnerCommand, javaRunnersDir } from '../toolchains/jvm.js';
import { buildRustRunners, rustBuildError, rustProfile, rustRunnerCommand, rustRunnersDir } from '../toolchains/cargo.js';

import { CLIENTS, findClient, REFEREE, type ClientSpec, type RunSpec } from './registry.js';

export {
  CLIENTS,
  captureClients,
  clientNames,
  findClient,
  PYTHON_LIBRARIES,
  REFEREE,
  type ClientSpec,
  type Task,
} from './registry.js';

type Built = { path: string } | { error: string };

/** A runner of another language, built on first use (src/toolchains/): how, where, how it starts, what it is called. */
interface BuiltRunner {
  /** What `setup` calls it. */
  title: string;
  /** What the clients' rows call it, and whether that is several runners (one build of a source tree). */
  what: string;
  several: boolean;
  /** What its build needs. */
  needs: string;
  /** Built against the Python environment's wheels (epicscorelibs, pvxslibs): built once that is ready. */
  python: boolean;
  /** The program or folder built (it may not exist yet). */
  path(): string;
  /** Why its last build failed (undefined when it did not). */
  error(): string | undefined;
  build(python: string): Promise<Built>;
  /** The command line of the runner the declaration names in it (a Java main class, a Rust binary; a C program is a build of its own). */
  command(name: string): { command: string; args: string[] };
  /** A client's version, from the doctor's report. */
  version(spec: ClientSpec, report: EnvironmentReport): string;
}

/** A client's library at the version the doctor reports. */
const libraryVersion = (spec: ClientSpec, report: EnvironmentReport): string => report.libraries[spec.library]?.version ?? '?';

/** A compiled program of c/, built against the Python environment's wheels; its version is its library's, under `label`. */
function cProgram(o: Pick<BuiltRunner, 'title' | 'what' | 'needs' | 'path' | 'error' | 'build'>, label: string): BuiltRunner {
  return {
    ...o,
    several: false,
    python: true,
    command: () => ({ command: o.path(), args: [] }),
    version: (spec, report) => `${label} ${libraryVersion(spec, report)}`,
  };
}

/**
 * The built runners, by the name a declaration gives them: its `c` (the program's library), or
 * `java` and `rust` (a source tree each, whose runners are built together).
 */
const BUILT: Readonly<Record<string, BuiltRunner>> = {
  libca: cProgram(
    {
      title: 'C runner (c-libca)',
      what: 'the C runner',
      needs: 'a C compiler',
      path: cRunnerPath,
      error: cBuildError,
      build: buildCRunner,
    },
    'libca',
  ),
  pvxs: cProgram(
    {
      title: 'C++ runner (c-pvxs)',
      what: 'the pvxs runner',
      needs: 'a C++ compiler',
      path: pvxsRunnerPath,
      error: pvxsBuildError,
      build: buildPvxsRunner,
    },
    'pvxs',
  ),
  java: {
    title: 'Java runners',
    what: 'the Java runners',
    several: true,
    needs: 'a JDK and Maven',
    python: false,
    path: javaRunnersDir,
    error: javaBuildError,
    build: () => buildJavaRunners(),
    command: javaRunnerCommand,
    version: (spec, report) => `${spec.library} ${libraryVersion(spec, report)}`,
  },
  rust: {
    title: 'Rust runners',
    what: 'the Rust runners',
    several: true,
    needs: 'cargo',
    python: false,
    path: rustRunnersDir,
    error: rustBuildError,
    build: () => buildRustRunners(),
    command: rustRunnerCommand,
    // A build of another profile than release is not what the Rust clients' figures are of: said beside the version.
    version: (spec, report) =>
      `${spec.library} ${libraryVersion(spec, report)}${rustProfile() !== 'release' ? ` (${rustProfile()} build)` : ''}`,
  },
};

/** The built runner a declaration starts, and the runner it names in it. */
function builtRun(run: RunSpec): { runner: string; name: string } | undefined {
  if ('c' in run) return { runner: run.c, name: run.c };
  if ('java' in run) return { runner: 'java', name: run.java };
  if ('rust' in run) return { runner: 'rust', name: run.rust };
  return undefined;
}

/** The built runners a client needs: the one its runner is, or the C program its Node runner runs (caget-procs). */
function builtRunnersOf(spec: ClientSpec): string[] {
  const run = spec.run;
  if ('node' in run) return run.caget ? [run.caget] : [];
  const built = builtRun(run);
  return built ? [built.runner] : [];
}

const builtRunner = (name: string): BuiltRunner => BUILT[name]!;

/** Refuse a declaration naming a runner no build makes: a bug of the package, said at once (below, for clients.json's). */
export function checkBuiltRunners(clients: readonly ClientSpec[]): void {
  for (const c of clients)
    for (const name of builtRunnersOf(c))
      if (!Object.hasOwn(BUILT, name))
        throw new Error(`clients.json: client ${JSON.stringify(c.name)}: no runner ${name} is built (${Object.keys(BUILT).join(', ')})`);
}
checkBuiltRunners(CLIENTS);

/**
 * The command line that starts a client's runner for a task, and what it adds to the
 * environment. The capture task has runners of its own (a client declared `capture`).
 */
export function runnerCommand(
  spec: Pick<ClientSpec, 'name'>,
  python: string,
  task?: string,
): { command: string; args: string[]; env?: Record<string, string> } {
  // A name no declaration has goes to the Python driver, which says it does not know it.
  const run = findClient(spec.name)?.run ?? { python: spec.name };
  if (task === 'capture') {
    if ('node' in run) return { command: process.execPath, args: [join(PACKAGE_ROOT, 'dist', 'runners', 'node-capture.js')] };
    const m = pythonModule('capture_driver');
    return { command: python, args: ['-u', ...m.args, '--client', spec.name], env: m.env };
  }
  const built = builtRun(run);
  if (built) return builtRunner(built.runner).command(built.name);
  if ('node' in run) {
    const script = join(PACKAGE_ROOT, 'dist', 'runners', run.node);
    return {
      command: process.execPath,
      args: [script, ...(run.args ?? []), ...(run.caget ? ['--caget', builtRunner(run.caget).path()] : [])],
    };
  }
  const m = pythonModule('driver');
  return { command: python, args: ['-u', ...m.args, '--client', spec.name], env: m.env };
}

export interface PrepareOptions {
  /** The managed Python environment (or EPICSPERF_PYTHON's): wanted, and rebuilt with `force`. */
  python: boolean | { force: boolean };
  /** The clients whose built runners (C, C++, Java, Rust) to build. */
  clients: readonly ClientSpec[];
}

export interface Prepared {
  /** The interpreter ('python3' when the environment was not asked for). */
  python: string;
  /** The built runners the clients need, by name (`libca`, `pvxs`, `java`, `rust`), in that order, with what `setup` calls each. */
  built: { name: string; title: string; result: Built }[];
}

/**
 * Make the runners ready, the independent builds side by side: the Java and Rust runners from the
 * start, beside the Python environment; the C and C++ runners together once it is ready. A build
 * that fails leaves its reason and the others built; a Python environment that cannot be made
 * is thrown at once.
 */
export async function prepareRunners(opts: PrepareOptions): Promise<Prepared> {
  const names = Object.keys(BUILT).filter((name) => opts.clients.some((c) => builtRunnersOf(c).includes(name)));
  const python = opts.python
    ? ensurePythonEnv(typeof opts.python === 'object' ? { force: opts.python.force } : {})
    : Promise.resolve('python3');
  const builds = names.map((name) => {
    const b = builtRunner(name);
    return b.python ? python.then((p) => b.build(p)) : b.build('');
  });
  // A Python environment that cannot be made is the command's error, said at once: the builds
  // under way are stopped, not waited for.
  for (const b of builds) b.catch(() => undefined);
  let interpreter: string;
  try {
    interpreter = await python;
  } catch (err) {
    stopBuilds();
    throw err;
  }
  const built = await Promise.all(builds);
  return { python: interpreter, built: names.map((name, i) => ({ name, title: builtRunner(name).title, result: built[i]! })) };
}

export interface ClientStatus {
  name: string;
  available: boolean;
  version?: string;
  reason?: string;
}

/** Availability and version of every client, from one doctor report. */
export function clientStatuses(report: EnvironmentReport): ClientStatus[] {
  const env = pythonEnvStatus();
  return CLIENTS.map((spec) => {
    if (spec.library === 'epicsperf') return { name: spec.name, available: true, version: packageVersion() };
    const needed = builtRunnersOf(spec).map(builtRunner);
    if (needed.length > 0) {
      const missing = needed.find((b) => !existsSync(b.path()));
      if (missing)
        return {
          name: spec.name,
          available: false,
          reason:
            missing.error() ??
            `${missing.what} ${missing.several ? 'are' : 'is'} not built (needs ${missing.needs}; run \`npx epicsperf setup\`)`,
        };
      return { name: spec.name, available: true, version: needed[0]!.version(spec, report) };
    }
    const lib = report.libraries[spec.library];
    if (spec.runtime === 'python' && !env.ready)
      return { name: spec.name, available: false, reason: 'the Python environment is not set up: run `npx epicsperf setup`' };
    if (!lib?.version) return { name: spec.name, available: false, reason: lib?.error ?? 'not installed' };
    if (lib.error) return { name: spec.name, available: false, version: lib.version, reason: lib.error };
    return { name: spec.name, available: true, version: lib.version };
  });
}

export async function clientStatusList(): Promise<{ report: EnvironmentReport; statuses: ClientStatus[] }> {
  const report = await doctor();
  return { report, statuses: clientStatuses(report) };
}

/**
 * Make the asked clients runnable: the managed Python environment for the built-in IOC and the
 * Python runners, and the runners of other languages they need (each built once, on first use;
 * side by side, see prepareRunners). `referee`: values will be checked, by the referee's runner
 * (see bench/snapshot.ts). Returns the Python interpreter. A runner that cannot be built leaves
 * its rows saying why.
 */
export async function prepareClients(clients: readonly ClientSpec[], builtinIoc: boolean, referee = false): Promise<string> {
  const all = referee ? [...clients, findClient(REFEREE)!] : clients;
  const prepared = await prepareRunners({
    python: builtinIoc || all.some((c) => c.runtime === 'python' || builtRunnersOf(c).some((name) => builtRunner(name).python)),
    clients: all,
  });
  return prepared.python;
}
