// Builds the c-pvxs runner (c/epicsperf_pvxs.cpp) and the pvxs server runner
// (c/epicsperf_pvxs_server.cpp) with the system C++ compiler against libpvxs of the pvxslibs wheel
// (and libCom of epicscorelibs); each is rebuilt only when its source or the wheels change.
// A build that fails leaves its one-line reason beside the program's path, for the row.
import { join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import { buildError, buildIfChanged, capture, failed, takesHere } from './built.js';
import { coreLibs, platformIncludes } from './clib.js';

const SOURCE = join(PACKAGE_ROOT, 'c', 'epicsperf_pvxs.cpp');
/** The fd-3 events both programs include. */
const EVENTS = join(PACKAGE_ROOT, 'c', 'epicsperf_events.inc.cpp');
/** Included by SOURCE: part of what decides a rebuild. */
const INCLUDED = [join(PACKAGE_ROOT, 'c', 'epicsperf_pvxs_put.inc.cpp'), EVENTS];
const SERVER_SOURCE = join(PACKAGE_ROOT, 'c', 'epicsperf_pvxs_server.cpp');

/** Where the compiled pvxs runner lives (it may not exist yet). */
export function pvxsRunnerPath(): string {
  return join(epicsperfHome(), 'bin', 'epicsperf-pvxs');
}

/** Why the last build failed (undefined when it did not, or was never tried). */
export function pvxsBuildError(): string | undefined {
  return buildError(pvxsRunnerPath());
}

/** Where the compiled pvxs server runner lives (it may not exist yet). */
export function pvxsServerPath(): string {
  return join(epicsperfHome(), 'bin', 'epicsperf-pvxs-server');
}

/** Why the last build of the server runner failed (undefined when it did not, or was never tried). */
export function pvxsServerBuildError(): string | undefined {
  return buildError(pvxsServerPath());
}

const PROBE = [
  'import json, os, pvxslibs, pvxslibs.path as p, pvxslibs.version as v',
  'print(json.dumps({"include": p.include_path, "lib": os.path.join(os.path.dirname(pvxslibs.__file__), "lib"), "version": v.version}))',
].join('\n');

async function pvxsLibs(python: string): Promise<{ include: string; lib: string; version: string } | { error: string }> {
  const r = await capture(python, ['-c', PROBE]);
  if (r.spawnError) return { error: `cannot run ${python}: ${r.spawnError.code ?? r.spawnError.message}` };
  if (r.code !== 0) return { error: `pvxslibs is not installed in ${python}` };
  try {
    return JSON.parse(r.stdout.trim()) as { include: string; lib: string; version: string };
  } catch {
    return { error: `cannot read the pvxslibs paths from ${python}` };
  }
}

/** What to compile: its name in messages, where it goes, its main source, the files that source includes. */
interface Program {
  what: string;
  path: string;
  source: string;
  included: string[];
}

/** Compile one program of c/ against the wheels' libpvxs and libCom, unless the one there is current. */
async function build(python: string, program: Program): Promise<{ path: string } | { error: string }> {
  const core = await coreLibs(python);
  if ('error' in core) return core;
  const pvxs = await pvxsLibs(python);
  if ('error' in pvxs) return pvxs;
  const cxx = process.env.CXX || 'c++';
  return buildIfChanged({
    what: program.what,
    path: program.path,
    inputs: [program.source, ...program.included],
    key: { pvxs: pvxs.version, core: core.version, lib: pvxs.lib, cxx, platform: process.platform },
    takes: takesHere(10),
    steps: (out) => [
      {
        tool: 'C++ compiler',
        command: cxx,
        // The wheel's libpvxs was built with the old std::string ABI: the program must use it too.
        args: [
          '-O2',
          '-Wall',
          '-std=c++11',
          '-D_GLIBCXX_USE_CXX11_ABI=0',
          '-pthread',
          `-I${pvxs.include}`,
          ...platformIncludes(core.include).map((dir) => `-I${dir}`),
          '-o',
          out,
          program.source,
          `-L${pvxs.lib}`,
          `-L${core.lib}`,
          '-lpvxs',
          '-lCom',
          `-Wl,-rpath,${pvxs.lib}`,
          `-Wl,-rpath,${core.lib}`,
        ],
      },
    ],
  });
}

/**
 * Compile the pvxs runner into `<epicsperfHome()>/bin/epicsperf-pvxs` unless the one there is
 * current. Resolves to its path or a one-line reason (no C++ compiler, no pvxslibs, a failed
 * build), which is also kept for `clients` and the bench rows.
 */
export async function buildPvxsRunner(python: string): Promise<{ path: string } | { error: string }> {
  const r = await build(python, {
    what: 'the pvxs runner',
    path: pvxsRunnerPath(),
    source: SOURCE,
    included: INCLUDED,
  });
  // A build that failed kept its reason; so does a library that is not there.
  return 'error' in r ? failed(pvxsRunnerPath(), r.error) : r;
}

/**
 * Compile the pvxs server runner into `<epicsperfHome()>/bin/epicsperf-pvxs-server` unless the
 * one there is current, as the pvxs runner. Resolves to its path or a one-line reason, which is
 * also kept (`pvxsServerBuildError()`).
 */
export async function buildPvxsServer(python: string): Promise<{ path: string } | { error: string }> {
  const r = await build(python, {
    what: 'the pvxs server runner',
    path: pvxsServerPath(),
    source: SERVER_SOURCE,
    included: [EVENTS],
  });
  return 'error' in r ? failed(pvxsServerPath(), r.error) : r;
}
