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
import { buildCRunner, cRunnerPath } from '../toolchains/clib.js';
import { buildPvxsRunner, pvxsBuildError, pvxsRunnerPath } from '../toolchains/cxxlib.js';
import { buildJavaRunners, javaBuildError, javaRunnerCommand, javaRunnersDir } from '../toolchains/jvm.js';
import { buildRustRunners, rustBuildError, rustProfile, rustRunnerCommand, rustRunnersDir } from '../toolchains/cargo.js';

import { CLIENTS, findClient, type ClientSpec } from './registry.js';

export { CLIENTS, captureClients, clientNames, findClient, PYTHON_LIBRARIES, type ClientSpec, type Workload } from './registry.js';

/**
 * The command line that starts a client's runner for a workload, and what it adds to the
 * environment. The capture workload has runners of its own (a client declared `capture`).
 */
export function runnerCommand(
  spec: Pick<ClientSpec, 'name'>,
  python: string,
  workload?: string,
): { command: string; args: string[]; env?: Record<string, string> } {
  // A name no declaration has goes to the Python driver, which says it does not know it.
  const run = findClient(spec.name)?.run ?? { python: spec.name };
  if (workload === 'capture') {
    if ('node' in run) return { command: process.execPath, args: [join(PACKAGE_ROOT, 'dist', 'capture', 'runner.js')] };
    const m = pythonModule('capture_runner');
    return { command: python, args: ['-u', ...m.args, '--client', spec.name], env: m.env };
  }
  if ('c' in run) return { command: run.c === 'pvxs' ? pvxsRunnerPath() : cRunnerPath(), args: [] };
  if ('java' in run) return javaRunnerCommand(run.java);
  if ('rust' in run) return rustRunnerCommand(run.rust);
  if ('node' in run) {
    const script = join(PACKAGE_ROOT, 'dist', 'bench', 'runners', run.node);
    return { command: process.execPath, args: [script, ...(run.args ?? []), ...(run.caget ? ['--caget', cRunnerPath()] : [])] };
  }
  const m = pythonModule('runner');
  return { command: python, args: ['-u', ...m.args, '--client', spec.name], env: m.env };
}

/** The client runs the C++ pvxs runner (the others of runtime c run the libca one). */
const usesPvxs = (c: ClientSpec): boolean => 'c' in c.run && c.run.c === 'pvxs';

/** The binaries of the declared Rust runners (one cargo build makes them all). */
const rustBinaries = (): string[] => [...new Set(CLIENTS.flatMap((c) => ('rust' in c.run ? [c.run.rust] : [])))];

/** The Java and Rust runners: built together, per runtime, from a source tree of the package. */
const BUILT = {
  java: { dir: javaRunnersDir, error: javaBuildError, build: buildJavaRunners, needs: 'a JDK and Maven' },
  rust: { dir: rustRunnersDir, error: rustBuildError, build: () => buildRustRunners(rustBinaries()), needs: 'cargo' },
} as const;

type Built = { path: string } | { error: string };

/** Build the Java and Rust runners the clients need (once, on first use), side by side; a failure is kept for their rows. */
export async function buildRunners(clients: readonly ClientSpec[]): Promise<Record<string, Built>> {
  const runtimes = (['java', 'rust'] as const).filter((runtime) => clients.some((c) => c.runtime === runtime));
  const built = await Promise.all(runtimes.map((runtime) => BUILT[runtime].build()));
  return Object.fromEntries(runtimes.map((runtime, i) => [runtime, built[i]!]));
}

export interface PrepareOptions {
  /** The managed Python environment (or EPICSPERF_PYTHON's): wanted, and rebuilt with `force`. */
  python: boolean | { force: boolean };
  /** The C runner on libca; the C++ runner on pvxs (both need the Python environment's wheels). */
  c: boolean;
  pvxs: boolean;
  /** The clients whose Java and Rust runners to build. */
  clients: readonly ClientSpec[];
}

export interface Prepared {
  /** The interpreter ('python3' when the environment was not asked for). */
  python: string;
  c?: Built;
  pvxs?: Built;
  /** The Java and Rust runners, by runtime. */
  built: Record<string, Built>;
}

/**
 * Make the runners ready, the independent builds side by side: the Java and Rust runners from the
 * start, beside the Python environment; the C and C++ runners together once it is ready. A build
 * that fails leaves its reason and the others built; a Python environment that cannot be made
 * is thrown at once.
 */
export async function prepareRunners(opts: PrepareOptions): Promise<Prepared> {
  const others = buildRunners(opts.clients);
  // A Python environment that cannot be made is the command's error, said at once: the Java and
  // Rust builds under way are stopped, not waited for.
  others.catch(() => undefined);
  let python = 'python3';
  try {
    if (opts.python) python = await ensurePythonEnv(typeof opts.python === 'object' ? { force: opts.python.force } : {});
  } catch (err) {
    stopBuilds();
    throw err;
  }
  const [c, pvxs, built] = await Promise.all([
    opts.c ? buildCRunner(python) : undefined,
    opts.pvxs ? buildPvxsRunner(python) : undefined,
    others,
  ]);
  return { python, built, ...(c && { c }), ...(pvxs && { pvxs }) };
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
    if (usesPvxs(spec)) {
      if (!existsSync(pvxsRunnerPath()))
        return {
          name: spec.name,
          available: false,
          reason: pvxsBuildError() ?? 'the pvxs runner is not built (needs a C++ compiler; run `npx epicsperf setup`)',
        };
      return { name: spec.name, available: true, version: `pvxs ${report.libraries.pvxslibs?.version ?? '?'}` };
    }
    if (spec.runtime === 'java' || spec.runtime === 'rust') {
      const built = BUILT[spec.runtime];
      if (!existsSync(built.dir()))
        return {
          name: spec.name,
          available: false,
          reason:
            built.error() ??
            `the ${spec.runtime === 'java' ? 'Java' : 'Rust'} runners are not built (needs ${built.needs}; run \`npx epicsperf setup\`)`,
        };
      // A Rust build of another profile than release is not what the Rust clients' figures are of: said beside the version.
      const profile = spec.runtime === 'rust' && rustProfile() !== 'release' ? ` (${rustProfile()} build)` : '';
      return { name: spec.name, available: true, version: `${spec.library} ${report.libraries[spec.library]?.version ?? '?'}${profile}` };
    }
    if (spec.runtime === 'c') {
      const path = cRunnerPath();
      if (!existsSync(path))
        return { name: spec.name, available: false, reason: 'the C runner is not built (needs a C compiler; run `npx epicsperf setup`)' };
      const lib = report.libraries.epicscorelibs;
      return { name: spec.name, available: true, version: `libca ${lib?.version ?? '?'}` };
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
 * Python runners, the C runner for the libca clients, the C++, Java and Rust runners for theirs
 * (each built once, on first use; side by side, see prepareRunners).
 * `referee`: values will be checked, by the C runner (see bench/snapshot.ts). Returns the Python
 * interpreter. A C runner that cannot be built leaves its rows saying why.
 */
export async function prepareClients(clients: readonly ClientSpec[], builtinIoc: boolean, referee = false): Promise<string> {
  const prepared = await prepareRunners({
    python: builtinIoc || referee || clients.some((c) => c.runtime === 'python' || c.runtime === 'c'),
    c: referee || clients.some((c) => c.runtime === 'c' && !usesPvxs(c)),
    pvxs: clients.some(usesPvxs),
    clients,
  });
  return prepared.python;
}
