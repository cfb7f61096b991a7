// Builds the c-libca runner (c/epicsperf_ca.c) with the system C compiler against the libca of
// the epicscorelibs wheel in the Python environment; rebuilt only when the source or wheel changes.
import { join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import { buildError, buildIfChanged, capture, takesHere } from './built.js';

const SOURCE = join(PACKAGE_ROOT, 'c', 'epicsperf_ca.c');
/** Included by SOURCE: part of what decides a rebuild. */
const INCLUDED = [join(PACKAGE_ROOT, 'c', 'epicsperf_ca_put.inc.c')];

/** Where the compiled C runner lives (it may not exist yet). */
export function cRunnerPath(): string {
  return join(epicsperfHome(), 'bin', 'epicsperf-ca');
}

/** Why the last build failed (undefined when it did not, or was never tried). */
export function cBuildError(): string | undefined {
  return buildError(cRunnerPath());
}

interface CoreLibs {
  include: string;
  lib: string;
  version: string;
}

const PROBE = [
  'import json, epicscorelibs.path as p, epicscorelibs.version as v',
  'print(json.dumps({"include": p.include_path, "lib": p.lib_path, "version": v.version}))',
].join('\n');

export async function coreLibs(python: string): Promise<CoreLibs | { error: string }> {
  const r = await capture(python, ['-c', PROBE]);
  if (r.spawnError) return { error: `cannot run ${python}: ${r.spawnError.code ?? r.spawnError.message}` };
  if (r.code !== 0) return { error: `epicscorelibs is not installed in ${python}` };
  try {
    return JSON.parse(r.stdout.trim()) as CoreLibs;
  } catch {
    return { error: `cannot read the epicscorelibs paths from ${python}` };
  }
}

/** The os/ and compiler/ include folders of EPICS base for this platform. */
export function platformIncludes(include: string): string[] {
  const os = process.platform === 'darwin' ? 'Darwin' : process.platform === 'win32' ? 'WIN32' : 'Linux';
  const compiler = process.platform === 'darwin' ? 'clang' : process.platform === 'win32' ? 'msvc' : 'gcc';
  return [include, join(include, 'os', os), join(include, 'compiler', compiler)];
}

/**
 * Compile the C runner into `<epicsperfHome()>/bin/epicsperf-ca`, unless the one there was
 * built from the same source and epicscorelibs. Resolves to its path, or to a one-line reason
 * (no C compiler, no epicscorelibs, a failed build).
 */
export async function buildCRunner(python: string): Promise<{ path: string } | { error: string }> {
  const libs = await coreLibs(python);
  if ('error' in libs) return libs;
  const cc = process.env.CC || 'cc';
  return buildIfChanged({
    what: 'the C runner',
    path: cRunnerPath(),
    inputs: [SOURCE, ...INCLUDED],
    key: { version: libs.version, lib: libs.lib, cc, platform: process.platform },
    takes: takesHere(5),
    steps: (out) => [
      {
        tool: 'C compiler',
        command: cc,
        args: [
          '-O2',
          '-Wall',
          ...platformIncludes(libs.include).map((dir) => `-I${dir}`),
          '-o',
          out,
          SOURCE,
          `-L${libs.lib}`,
          '-lca',
          '-lCom',
          '-lm',
          `-Wl,-rpath,${libs.lib}`,
        ],
      },
    ],
  });
}
