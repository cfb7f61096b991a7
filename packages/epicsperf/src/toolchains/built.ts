// Runners built on first use into a folder of EPICSPERF_HOME from a source tree of the package
// (the Java and Rust runners): rebuilt only when a source or the toolchain changes, built in a
// temporary folder and renamed into place, a failed build's one-line reason kept beside it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { capture, firstError } from './clib.js';

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
  /** The folder the build leaves (built as `<dir>.tmp`, then renamed). */
  dir: string;
  /** The files whose content decides a rebuild. */
  inputs: readonly string[];
  /** Whatever else decides a rebuild (toolchain versions, paths). */
  key: unknown;
  /** The commands that build into a folder, one after another. */
  steps: (out: string) => BuildStep[];
  /** Done last, in the folder: a reason when it fails. */
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

/** Why the last build of `dir` failed (undefined when it did not, or was never tried). */
export function buildError(dir: string): string | undefined {
  try {
    return readFileSync(dir + '.error', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The command found on PATH, else the first of `fallbacks` that exists, else the bare name. */
export function findCommand(name: string, fallbacks: readonly string[] = []): string {
  for (const d of (process.env.PATH ?? '').split(delimiter)) if (d && existsSync(join(d, name))) return join(d, name);
  return fallbacks.find((f) => existsSync(f)) ?? name;
}

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The first line a tool prints of its version, or undefined when it does not run. */
export async function toolVersion(command: string, args: string[]): Promise<{ version?: string; error?: string }> {
  const r = await capture(command, args);
  if (r.spawnError) return { error: r.spawnError.code === 'ENOENT' ? `${command} not found` : r.spawnError.message };
  const line = (r.stdout + '\n' + r.stderr)
    // Maven colours its output even with -B: its escape sequences go.
    .replace(ANSI_COLOUR, '')
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
        ? `${step.tool} is missing (${step.command} not found)`
        : `cannot run ${step.command}: ${r.spawnError.message}`;
    if (r.code !== 0) return `${plan.what} did not build (${step.tool}): ${firstError(r.stderr || r.stdout)}`;
  }
  return plan.finish?.(out);
}

/**
 * Build `plan.dir` unless the one there was built from the same inputs and key (kept in
 * `<dir>.sha256`). Resolves to the folder or to a one-line reason, which is also kept in
 * `<dir>.error` for `clients` and the bench rows; a failed build leaves no folder behind.
 */
export async function buildIfChanged(plan: BuildPlan): Promise<{ dir: string } | { error: string }> {
  const { dir } = plan;
  const hasher = createHash('sha256');
  for (const f of plan.inputs) hasher.update(f).update(readFileSync(f));
  const hash = hasher.update(JSON.stringify(plan.key)).digest('hex');
  try {
    if (existsSync(dir) && readFileSync(dir + '.sha256', 'utf8').trim() === hash) return { dir };
  } catch {
    // no hash file: build
  }
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = dir + '.tmp';
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const error = plan.inputs.length === 0 ? `${plan.what}: no sources` : await runSteps(plan, tmp);
  if (error !== undefined) {
    rmSync(tmp, { recursive: true, force: true });
    // A folder left from an earlier build is not these sources': it must not run.
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir + '.error', error + '\n');
    return { error };
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  writeFileSync(dir + '.sha256', hash + '\n');
  rmSync(dir + '.error', { force: true });
  return { dir };
}
