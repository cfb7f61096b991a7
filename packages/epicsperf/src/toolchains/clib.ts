// Builds the c-libca runner (c/epicsperf_ca.c) with the system C compiler against the libca of
// the epicscorelibs wheel in the Python environment; rebuilt only when the source or wheel changes.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';

const SOURCE = join(PACKAGE_ROOT, 'c', 'epicsperf_ca.c');
/** Included by SOURCE: part of what decides a rebuild. */
const INCLUDED = [join(PACKAGE_ROOT, 'c', 'epicsperf_ca_put.inc.c')];

/** Where the compiled C runner lives (it may not exist yet). */
export function cRunnerPath(): string {
  return join(epicsperfHome(), 'bin', 'epicsperf-ca');
}

interface Captured {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: NodeJS.ErrnoException;
}

export function capture(
  command: string,
  args: string[],
  opts: { cwd?: string | undefined; env?: Record<string, string> | undefined } = {},
): Promise<Captured> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(command, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: opts.cwd,
        env: opts.env ? { ...process.env, ...opts.env } : process.env,
      });
    } catch (err) {
      resolve({ code: null, stdout, stderr, spawnError: err as NodeJS.ErrnoException });
      return;
    }
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => resolve({ code: null, stdout, stderr, spawnError: err }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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

export function firstError(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /error/i.test(l)) ?? lines[0] ?? 'no output';
  return line.length > 200 ? line.slice(0, 200) + '...' : line;
}

export interface CompileOptions {
  /** The program to write (built as `<path>.tmp`, then renamed). */
  path: string;
  /** The source compiled; `included` are the files it includes (both decide a rebuild). */
  source: string;
  included: readonly string[];
  /** The compiler command, and what to call it in a reason ('C', 'C++'). */
  compiler: string;
  language: string;
  /** The runner, for the reasons ('the C runner'). */
  what: string;
  /** The compiler's arguments for an output file. */
  args: (out: string) => string[];
  /** Whatever else decides a rebuild (library versions, paths, the compiler). */
  key: unknown;
}

/**
 * Compile a runner unless the one at `path` was built from the same sources and key (kept in
 * `<path>.sha256`). Resolves to its path, or to a one-line reason (no compiler, a failed build).
 */
export async function compileIfChanged(o: CompileOptions): Promise<{ path: string } | { error: string }> {
  const { path } = o;
  const hashFile = path + '.sha256';
  let source: Buffer;
  try {
    source = readFileSync(o.source);
  } catch {
    return { error: `${o.what} source is missing (${o.source})` };
  }
  const hasher = createHash('sha256').update(source);
  for (const f of o.included) hasher.update(readFileSync(f));
  const hash = hasher.update(JSON.stringify(o.key)).digest('hex');
  try {
    if (existsSync(path) && readFileSync(hashFile, 'utf8').trim() === hash) return { path };
  } catch {
    // no hash file: build
  }
  mkdirSync(dirname(path), { recursive: true });
  const r = await capture(o.compiler, o.args(`${path}.tmp`));
  if (r.spawnError) {
    return {
      error:
        r.spawnError.code === 'ENOENT'
          ? `no ${o.language} compiler (${o.compiler} not found)`
          : `cannot run ${o.compiler}: ${r.spawnError.message}`,
    };
  }
  if (r.code !== 0) {
    rmSync(`${path}.tmp`, { force: true });
    return { error: `${o.what} did not compile: ${firstError(r.stderr || r.stdout)}` };
  }
  renameSync(`${path}.tmp`, path);
  writeFileSync(hashFile, hash + '\n');
  return { path };
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
  return compileIfChanged({
    path: cRunnerPath(),
    source: SOURCE,
    included: INCLUDED,
    compiler: cc,
    language: 'C',
    what: 'the C runner',
    args: (out) => [
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
    key: { version: libs.version, lib: libs.lib, cc, platform: process.platform },
  });
}
