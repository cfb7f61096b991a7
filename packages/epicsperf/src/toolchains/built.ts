// Runners built on first use into EPICSPERF_HOME from sources of the package (a C or C++ program,
// a folder of Java classes and jars, Rust binaries): rebuilt only when a source or the toolchain
// changes, built beside their place and renamed into it, a failed build's one-line reason kept;
// one process builds while the others wait (a lock beside it), saying on stderr what it builds,
// why, how far it got and how long it took.
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, delimiter, dirname, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { killOnExit, killTree } from '../children.js';
import { PACKAGE_ROOT } from '../home.js';
import { acquireLock } from '../lock.js';
import { type ProgressOptions, toStderr, type Watch, watch } from '../progress.js';

interface Captured {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: NodeJS.ErrnoException;
}

/** The build commands running now. */
const running = new Set<ChildProcess>();
let stopped = false;

/**
 * Stop every build under way in this process, the compilers they started too, and start no
 * other, when the command that asked for them has failed: their promises resolve to 'stopped',
 * leaving no output and no reason kept (the next use builds again).
 */
export function stopBuilds(): void {
  stopped = true;
  for (const c of running) killTree(c);
}

/**
 * Run a command to its end and keep what it prints; `onLine` also sees each line of either
 * stream as it comes.
 */
export function capture(
  command: string,
  args: string[],
  opts: { cwd?: string | undefined; env?: Record<string, string> | undefined; onLine?: ((line: string) => void) | undefined } = {},
): Promise<Captured> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child: ChildProcessByStdio<null, Readable, Readable>;
    if (stopped) {
      resolve({ code: null, stdout, stderr, spawnError: Object.assign(new Error('stopped'), { code: 'ESTOPPED' }) });
      return;
    }
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
    // A build left running by a command that ended (an error elsewhere, a signal) would go on
    // writing its output: it ends with this process, compilers and all.
    killOnExit(child, { tree: true });
    running.add(child);
    child.once('exit', () => running.delete(child));
    const onLine = opts.onLine;
    // The part of each stream's last line that has not ended yet.
    const partial = { stdout: '', stderr: '' };
    const lines = (stream: 'stdout' | 'stderr', d: string): void => {
      if (!onLine) return;
      const parts = (partial[stream] + d).split(/\r?\n|\r/);
      partial[stream] = parts.pop()!;
      for (const l of parts) if (l.trim()) onLine(l);
    };
    const flush = (): void => {
      for (const l of [partial.stdout, partial.stderr]) if (onLine && l.trim()) onLine(l);
      partial.stdout = partial.stderr = '';
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      lines('stdout', d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      lines('stderr', d);
    });
    child.on('error', (err) => resolve({ code: null, stdout, stderr, spawnError: err }));
    child.on('close', (code) => {
      flush();
      resolve({ code, stdout, stderr });
    });
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
  /** What the command is, for a reason ('JDK', 'Maven', 'cargo'). */
  tool: string;
  /**
   * A line the command prints as a progress line ('compiling tokio (57/112)'), or undefined when
   * it is not one; such lines are never a failure's reason.
   */
  progress?: (line: string) => string | undefined;
  /** Other lines the command prints that are never a failure's reason (its own progress, say). */
  chatter?: RegExp;
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
  /** The commands that build it (into `out`), one after another (asked once per build). */
  steps: (out: string) => BuildStep[];
  /** Done last, on `out`: a reason when it fails. */
  finish?: (out: string) => string | undefined;
  /** How long a build takes here, for its first line ('about 5 minutes on 2 cores'). */
  takes?: string;
}

/** Where a build's lines go and how often; and how often a waiting process looks at the lock (500 ms). */
export interface BuildOptions extends ProgressOptions {
  pollMs?: number;
}

/**
 * How long a build takes on this machine, from what it takes on 2 cores: `parallel` work (a
 * cargo build) in proportion to the cores, up to 8 ('about 5 minutes on 2 cores').
 */
export function takesHere(secondsOn2Cores: number, parallel = false): string {
  const cores = availableParallelism();
  const s = parallel ? (secondsOn2Cores * 2) / Math.min(Math.max(cores, 1), 8) : secondsOn2Cores;
  const about = s < 10 ? 'a few seconds' : s < 90 ? `about ${Math.round(s / 10) * 10} seconds` : `about ${Math.round(s / 60)} minutes`;
  return `${about} on ${cores} core${cores === 1 ? '' : 's'}`;
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
 * matters (rustup's proxies pick the toolchain of the folder's rust-toolchain.toml, and install
 * it first when it is missing: `onLine` sees what they print meanwhile).
 */
export async function toolVersion(
  command: string,
  args: string[],
  cwd?: string,
  onLine?: (line: string) => void,
): Promise<{ version?: string; error?: string }> {
  const r = await capture(command, args, { cwd, onLine });
  if (r.spawnError) return { error: r.spawnError.code === 'ENOENT' ? `${command} not found` : r.spawnError.message };
  const line = (r.stdout + '\n' + r.stderr)
    .replace(COLOUR, '')
    .split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  if (r.code !== 0 || !line) return { error: `${command} failed: ${firstError(r.stderr || r.stdout)}` };
  return { version: line };
}

/** `text` without the lines `step` reads as progress or chatter. */
function reasonText(text: string, step: BuildStep): string {
  return text
    .split('\n')
    .filter((raw) => {
      const l = raw.replace(COLOUR, '');
      return !(step.progress?.(l) !== undefined || step.chatter?.test(l));
    })
    .join('\n')
    .trim();
}

async function runSteps(plan: BuildPlan, steps: readonly BuildStep[], out: string, w: Watch): Promise<string | undefined> {
  const name = plan.what.replace(/^the /, '');
  for (const step of steps) {
    const onLine = step.progress
      ? (line: string) => {
          const p = step.progress!(line.replace(COLOUR, ''));
          if (p !== undefined) w.progress(`${name}: ${p}`);
        }
      : undefined;
    const r = await capture(step.command, step.args, { cwd: step.cwd, env: step.env, onLine });
    if (r.spawnError)
      return r.spawnError.code === 'ENOENT'
        ? `no ${step.tool} (${step.command} not found)`
        : `cannot run ${step.command}: ${r.spawnError.message}`;
    if (r.code !== 0)
      return `${plan.what} did not build (${step.tool}): ${firstError(reasonText(r.stderr, step) || reasonText(r.stdout, step))}`;
  }
  return plan.finish?.(out);
}

/** The hash of a plan's inputs and key. */
function planHash(plan: BuildPlan): string {
  const hasher = createHash('sha256');
  // Each source by its place in the package, so that another checkout of the same sources (a
  // clone, a worktree) finds the build current.
  for (const f of plan.inputs) hasher.update(relative(PACKAGE_ROOT, f)).update(readFileSync(f));
  return hasher.update(JSON.stringify(plan.key)).digest('hex');
}

/** The hash `<path>.sha256` keeps: of the last build tried, good or failed. */
function keptHash(path: string): string | undefined {
  try {
    return readFileSync(path + '.sha256', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Build `plan.path` unless the one there was built from the same inputs and key (kept in
 * `<path>.sha256`). Resolves to its path or to a one-line reason, which is also kept in
 * `<path>.error` for `clients` and the bench rows; a failed build leaves nothing to run. One
 * process (or call) builds at a time, holding `<path>.lock`: one that has to wait says so once,
 * then takes what the other built, or its failure for the same inputs, and builds only when the
 * other built something else (other sources) or did not finish.
 */
export async function buildIfChanged(plan: BuildPlan, opts: BuildOptions = {}): Promise<{ path: string } | { error: string }> {
  const { path } = plan;
  const hash = planHash(plan);
  if (existsSync(path) && keptHash(path) === hash) return { path };
  mkdirSync(dirname(path), { recursive: true });
  let waited = false;
  const asked = Date.now();
  const release = await acquireLock(
    path + '.lock',
    (pid) => {
      waited = true;
      (opts.progress ?? toStderr)(`waiting for ${plan.what}, which process ${pid ?? '(starting)'} is building`);
    },
    opts.pollMs,
  );
  try {
    if (existsSync(path) && keptHash(path) === hash) return { path };
    if (waited && keptHash(path) === hash && failedSince(path, asked)) return { error: buildError(path)! };
    return await build(plan, hash, opts);
  } finally {
    release();
  }
}

/** Whether the build of `path` failed since `since` (ms; a second earlier is allowed for the file system's clock). */
function failedSince(path: string, since: number): boolean {
  try {
    return buildError(path) !== undefined && statSync(path + '.error').mtimeMs >= since - 1000;
  } catch {
    return false;
  }
}

async function build(plan: BuildPlan, hash: string, opts: BuildOptions): Promise<{ path: string } | { error: string }> {
  if (stopped) return { error: 'stopped' };
  const { path } = plan;
  const why =
    buildError(path) !== undefined
      ? 'the last build failed'
      : existsSync(path) || keptHash(path) !== undefined
        ? 'sources or toolchain changed'
        : 'first use';
  const tmp = path + '.tmp';
  const steps = plan.steps(tmp);
  const tools = [...new Set(steps.map((s) => basename(s.command)))].join(' and ');
  const w = watch(`building ${plan.what}`, opts);
  w.say(`building ${plan.what}${tools ? ` with ${tools}` : ''} (${why}${plan.takes ? `; ${plan.takes}` : ''})`);
  try {
    rmSync(tmp, { recursive: true, force: true });
    if (plan.folder) mkdirSync(tmp);
    const error = plan.inputs.length === 0 ? `${plan.what}: no sources` : await runSteps(plan, steps, tmp, w);
    if (error !== undefined) {
      rmSync(tmp, { recursive: true, force: true });
      if (stopped) return { error: 'stopped' };
      // The hash of what failed: a process that waited for this build takes its failure.
      writeFileSync(path + '.sha256', hash + '\n');
      w.say(`could not build ${plan.what} in ${w.elapsed()}: ${error}`);
      return failed(path, error);
    }
    rmSync(path, { recursive: true, force: true });
    renameSync(tmp, path);
    writeFileSync(path + '.sha256', hash + '\n');
    rmSync(path + '.error', { force: true });
    w.say(`built ${plan.what} in ${w.elapsed()}`);
    return { path };
  } finally {
    w.stop();
  }
}
