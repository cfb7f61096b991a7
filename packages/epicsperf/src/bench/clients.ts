// The clients epicsperf can measure: how to start each one's runner, which workloads it serves,
// and whether it is available here (with the reason when it is not).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePythonEnv, PACKAGE_ROOT, pythonEnvStatus, pythonModule } from '../pyenv/index.js';
import { doctor, packageVersion } from '../doctor.js';
import type { EnvironmentReport } from '../results/index.js';
import { buildCRunner, cRunnerPath } from './clib.js';
import { buildPvxsRunner, pvxsBuildError, pvxsRunnerPath } from './cxxlib.js';

export type Workload = 'snapshot' | 'monitor' | 'array' | 'array-put' | 'latency';

export interface ClientSpec {
  name: string;
  runtime: 'node' | 'python' | 'c';
  protocol: 'CA' | 'PVA';
  workloads: Workload[];
  description: string;
  /** The library whose version identifies this client (a key of EnvironmentReport.libraries, or 'epicsperf'). */
  library: string;
}

const py = (
  name: string,
  library: string,
  protocol: 'CA' | 'PVA',
  description: string,
  workloads: Workload[] = ['snapshot', 'monitor'],
): ClientSpec => ({
  name,
  runtime: 'python',
  protocol,
  workloads,
  description,
  library,
});
const ALL: Workload[] = ['snapshot', 'monitor', 'array'];
/** Clients whose runners also put: the array-put and latency workloads. */
const PUTS: Workload[] = [...ALL, 'array-put', 'latency'];

export const CLIENTS: readonly ClientSpec[] = [
  {
    name: 'node',
    runtime: 'node',
    protocol: 'CA',
    workloads: PUTS,
    library: 'epicsperf',
    description: "this project's TypeScript CA client",
  },
  {
    name: 'node-worker',
    runtime: 'node',
    protocol: 'CA',
    workloads: PUTS,
    library: 'epicsperf',
    description: 'the same, inside a worker thread',
  },
  {
    name: 'node-pva',
    runtime: 'node',
    protocol: 'PVA',
    workloads: ['snapshot', 'monitor', 'array'],
    library: 'epicsperf',
    description: "this project's TypeScript client over PV Access",
  },
  {
    name: 'epics-tca',
    runtime: 'node',
    protocol: 'CA',
    workloads: ['snapshot', 'monitor'],
    library: 'epics-tca',
    description: 'the epics-tca npm package (pure TypeScript CA)',
  },
  {
    name: 'c-libca',
    runtime: 'c',
    protocol: 'CA',
    workloads: PUTS,
    library: 'epicscorelibs',
    description: 'a small C program on libca (the reference)',
  },
  {
    name: 'c-pvxs',
    runtime: 'c',
    protocol: 'PVA',
    workloads: PUTS,
    library: 'pvxslibs',
    description: 'a small C++ program on pvxs (the PVA reference)',
  },
  {
    name: 'caget-procs',
    runtime: 'c',
    protocol: 'CA',
    workloads: ['snapshot'],
    library: 'epicscorelibs',
    description: 'one c-libca caget process per PV, all in parallel',
  },
  py('pyepics', 'pyepics', 'CA', 'pyepics PV objects, one after another', PUTS),
  py('pyepics-ca', 'pyepics', 'CA', 'pyepics ca module: create all channels, then connect and get', ALL),
  py('pyepics-threaded', 'pyepics', 'CA', 'pyepics PV gets from a thread pool'),
  py('pyepics-nonumpy', 'pyepics', 'CA', 'pyepics PV objects with arrays unpacked without numpy (as_numpy=False)', ['array']),
  py('caproto', 'caproto', 'CA', 'caproto threading client', PUTS),
  py('aioca', 'aioca', 'CA', 'aioca (asyncio, on libca)', PUTS),
  py('cothread', 'cothread', 'CA', 'cothread.catools (on libca)', PUTS),
  py('p4p', 'p4p', 'PVA', 'p4p thread Context (PV Access)', PUTS),
  py('pvapy', 'pvapy', 'PVA', 'pvapy Channel (PV Access)', PUTS),
  py('pvapy-nonumpy', 'pvapy', 'PVA', 'pvapy Channel with arrays read by getScalarArray (no numpy)', ['array']),
];

export function findClient(name: string): ClientSpec | undefined {
  return CLIENTS.find((c) => c.name === name);
}

export function clientNames(): string[] {
  return CLIENTS.map((c) => c.name);
}

/** The command line that starts a client's runner for a workload, and what it adds to the environment. */
export function runnerCommand(
  spec: Pick<ClientSpec, 'name'>,
  python: string,
): { command: string; args: string[]; env?: Record<string, string> } {
  const dist = join(PACKAGE_ROOT, 'dist', 'bench', 'runners');
  switch (spec.name) {
    case 'node':
      return { command: process.execPath, args: [join(dist, 'node.js')] };
    case 'node-pva':
      return { command: process.execPath, args: [join(dist, 'node.js'), '--pva'] };
    case 'node-worker':
      return { command: process.execPath, args: [join(dist, 'node.js'), '--worker'] };
    case 'epics-tca':
      return { command: process.execPath, args: [join(dist, 'epics-tca.js')] };
    case 'c-libca':
      return { command: cRunnerPath(), args: [] };
    case 'c-pvxs':
      return { command: pvxsRunnerPath(), args: [] };
    case 'caget-procs':
      return { command: process.execPath, args: [join(dist, 'caget-procs.js'), '--caget', cRunnerPath()] };
    default: {
      const m = pythonModule('runner');
      return { command: python, args: ['-u', ...m.args, '--client', spec.name], env: m.env };
    }
  }
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
    if (spec.name === 'c-pvxs') {
      if (!existsSync(pvxsRunnerPath()))
        return {
          name: spec.name,
          available: false,
          reason: pvxsBuildError() ?? 'the pvxs runner is not built (needs a C++ compiler; run `npx epicsperf setup`)',
        };
      return { name: spec.name, available: true, version: `pvxs ${report.libraries.pvxslibs?.version ?? '?'}` };
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
 * Python runners, and the C runner for the libca clients (each built once, on first use).
 * `referee`: values will be checked, by the C runner (see bench/snapshot.ts). Returns the Python
 * interpreter. A C runner that cannot be built leaves its rows saying why.
 */
export async function prepareClients(clients: readonly ClientSpec[], builtinIoc: boolean, referee = false): Promise<string> {
  const needsPython = builtinIoc || referee || clients.some((c) => c.runtime !== 'node');
  const python = needsPython ? await ensurePythonEnv() : 'python3';
  if (referee || clients.some((c) => c.runtime === 'c' && c.name !== 'c-pvxs')) await buildCRunner(python);
  if (clients.some((c) => c.name === 'c-pvxs')) await buildPvxsRunner(python);
  return python;
}
