// Builds the c-pvxs runner (c/epicsperf_pvxs.cpp) with the system C++ compiler against libpvxs of
// the pvxslibs wheel (and libCom of epicscorelibs); rebuilt only when the source or wheels change.
// A build that fails leaves its one-line reason beside the runner's path, for the client's row.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import { capture, compileIfChanged, coreLibs, platformIncludes } from './clib.js';

const SOURCE = join(PACKAGE_ROOT, 'c', 'epicsperf_pvxs.cpp');
/** Included by SOURCE: part of what decides a rebuild. */
const INCLUDED = [join(PACKAGE_ROOT, 'c', 'epicsperf_pvxs_put.inc.cpp')];

/** Where the compiled pvxs runner lives (it may not exist yet). */
export function pvxsRunnerPath(): string {
  return join(epicsperfHome(), 'bin', 'epicsperf-pvxs');
}

/** Why the last build failed (undefined when it did not, or was never tried). */
export function pvxsBuildError(): string | undefined {
  try {
    return readFileSync(pvxsRunnerPath() + '.error', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
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

async function build(python: string): Promise<{ path: string } | { error: string }> {
  const core = await coreLibs(python);
  if ('error' in core) return core;
  const pvxs = await pvxsLibs(python);
  if ('error' in pvxs) return pvxs;
  const cxx = process.env.CXX || 'c++';
  return compileIfChanged({
    path: pvxsRunnerPath(),
    source: SOURCE,
    included: INCLUDED,
    compiler: cxx,
    language: 'C++',
    what: 'the pvxs runner',
    // The wheel's libpvxs was built with the old std::string ABI: the program must use it too.
    args: (out) => [
      '-O2',
      '-Wall',
      '-std=c++11',
      '-D_GLIBCXX_USE_CXX11_ABI=0',
      '-pthread',
      `-I${pvxs.include}`,
      ...platformIncludes(core.include).map((dir) => `-I${dir}`),
      '-o',
      out,
      SOURCE,
      `-L${pvxs.lib}`,
      `-L${core.lib}`,
      '-lpvxs',
      '-lCom',
      `-Wl,-rpath,${pvxs.lib}`,
      `-Wl,-rpath,${core.lib}`,
    ],
    key: { pvxs: pvxs.version, core: core.version, lib: pvxs.lib, cxx, platform: process.platform },
  });
}

/**
 * Compile the pvxs runner into `<epicsperfHome()>/bin/epicsperf-pvxs` unless the one there is
 * current. Resolves to its path or a one-line reason (no C++ compiler, no pvxslibs, a failed
 * build), which is also kept for `clients` and the bench rows.
 */
export async function buildPvxsRunner(python: string): Promise<{ path: string } | { error: string }> {
  const r = await build(python);
  const errorFile = pvxsRunnerPath() + '.error';
  if ('error' in r) {
    mkdirSync(dirname(errorFile), { recursive: true });
    writeFileSync(errorFile, r.error + '\n');
    // A runner left from an earlier build is not this source's: it must not run.
    rmSync(pvxsRunnerPath(), { force: true });
  } else {
    rmSync(errorFile, { force: true });
  }
  return r;
}
