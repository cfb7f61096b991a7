// Runners built on first use into EPICSPERF_HOME from sources of the package (a C or C++ program,
// a folder of Java classes and jars, Rust binaries): rebuilt only when a source or the toolchain
// changes, built beside their place and renamed into it, a failed build's one-line reason kept.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';

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

export function firstError(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /error/i.test(l)) ?? lines[0] ?? 'no output';
  return line.length > 200 ? line.slice(0, 200) + '...' : line;
}

export interface BuildStep {
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** What the command is, for a reason ('a JDK', 'Maven', 'cargo'). */
  tool: string;
}

export interface BuildPlan {
  /** The runners, for the reasons ('the Java runners'). */
  what: string;
  /** The program, or the folder with `folder`, that the build leaves (built as `<path>.tmp`, then renamed). */
  path: string;
  folder?: boolean;
  /** The files whose content decides a rebuild. */
  inputs: readonly string[];
  /** Whatever else decides a rebuild (toolchain versions, paths). */
  key: unknown;
  /** The commands that build it (into `out`), one after another. */
  steps: (out: string) => BuildStep[];
  /** Done last, on `out`: a reason when it fails. */
  finish?: (out: string) => string | undefined;
}

/** Every file under `dir`, sorted, skipping `skip` folders (build output). */
export function listFiles(dir: string, skip: readonly string[] = []): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) walk(p);
      } else out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** Why the last build of `path` failed (undefined when it did not, or was never tried). */
export function buildError(path: string): string | undefined {
  try {
    return readFileSync(path + '.error', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A build of `path` that cannot be made: the reason kept, and what an earlier build left (not these sources') removed. */
export function failed(path: string, error: string): { error: string } {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path + '.error', error + '\n');
  return { error };
}

/** The command found on PATH, else the first of `fallbacks` that exists, else the bare name. */
export function findCommand(name: string, fallbacks: readonly string[] = []): string {
  for (const d of (process.env.PATH ?? '').split(delimiter)) if (d && existsSync(join(d, name))) return join(d, name);
  return fallbacks.find((f) => existsSync(f)) ?? name;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes, which Maven prints even in batch mode
const COLOUR = /\x1b\[[0-9;]*m/g;

/**
 * The first line a tool prints of its version, or undefined when it does not run; `cwd` where it
 * matters (rustup's proxies pick the toolchain of the folder's rust-toolchain.toml).
 */
export async function toolVersion(command: string, args: string[], cwd?: string): Promise<{ version?: string; error?: string }> {
  const r = await capture(command, args, { cwd });
  if (r.spawnError) return { error: r.spawnError.code === 'ENOENT' ? `${command} not found` : r.spawnError.message };
  const line = (r.stdout + '\n' + r.stderr)
    .replace(COLOUR, '')
    .split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  if (r.code !== 0 || !line) return { error: `${command} failed: ${firstError(r.stderr || r.stdout)}` };
  return { version: line };
}

async function runSteps(plan: BuildPlan, out: string): Promise<string | undefined> {
  for (const step of plan.steps(out)) {
    const r = await capture(step.command, step.args, { cwd: step.cwd, env: step.env });
    if (r.spawnError)
      return r.spawnError.code === 'ENOENT'
        ? `no ${step.tool} (${step.command} not found)`
        : `cannot run ${step.command}: ${r.spawnError.message}`;
    if (r.code !== 0) return `${plan.what} did not build (${step.tool}): ${firstError(r.stderr || r.stdout)}`;
  }
  return plan.finish?.(out);
}

/**
 * Build `plan.path` unless the one there was built from the same inputs and key (kept in
 * `<path>.sha256`). Resolves to its path or to a one-line reason, which is also kept in
 * `<path>.error` for `clients` and the bench rows; a failed build leaves nothing to run.
 */
export async function buildIfChanged(plan: BuildPlan): Promise<{ path: string } | { error: string }> {
  const { path } = plan;
  const hasher = createHash('sha256');
  for (const f of plan.inputs) hasher.update(f).update(readFileSync(f));
  const hash = hasher.update(JSON.stringify(plan.key)).digest('hex');
  try {
    if (existsSync(path) && readFileSync(path + '.sha256', 'utf8').trim() === hash) return { path };
  } catch {
    // no hash file: build
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = path + '.tmp';
  rmSync(tmp, { recursive: true, force: true });
  if (plan.folder) mkdirSync(tmp);
  const error = plan.inputs.length === 0 ? `${plan.what}: no sources` : await runSteps(plan, tmp);
  if (error !== undefined) {
    rmSync(tmp, { recursive: true, force: true });
    return failed(path, error);
  }
  rmSync(path, { recursive: true, force: true });
  renameSync(tmp, path);
  writeFileSync(path + '.sha256', hash + '\n');
  rmSync(path + '.error', { force: true });
  return { path };
}
