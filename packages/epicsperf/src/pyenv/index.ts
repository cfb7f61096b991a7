// The managed Python environment: a virtual environment that epicsperf creates once and
// reuses, pinned by python/requirements.txt, or an existing interpreter named by EPICSPERF_PYTHON.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { killOnExit } from '../children.js';
import { getLogger } from '../log.js';
import { PythonEnvError } from '../errors.js';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import { acquireLock } from '../lock.js';
import { toStderr, watch } from '../progress.js';

const log = getLogger('pyenv');

/** The folder that holds the Python package (python/pyproject.toml) and requirements.txt. */
export const PYTHON_DIR = join(PACKAGE_ROOT, 'python');
const PYTHON_PACKAGE = 'epicsperf_runners';
const REQUIREMENTS = join(PYTHON_DIR, 'requirements.txt');

/**
 * How to start a module of the Python package (the runners, the built-in IOC, the doctor): the
 * interpreter's arguments, `-m epicsperf_runners.<module>`, and the PYTHONPATH that finds the
 * package: PYTHON_DIR ahead of the one the child would inherit.
 */
export function pythonModule(module: string, inherited: NodeJS.ProcessEnv = process.env): { args: string[]; env: { PYTHONPATH: string } } {
  const rest = inherited.PYTHONPATH;
  return {
    args: ['-m', `${PYTHON_PACKAGE}.${module}`],
    env: { PYTHONPATH: rest ? `${PYTHON_DIR}${delimiter}${rest}` : PYTHON_DIR },
  };
}
const MARKER = 'epicsperf-requirements.sha256';

/**
 * The venv of this python/requirements.txt: `venv-<hash>` under epicsperfHome(). A checkout or
 * version with other pins gets a venv of its own, so building one never removes another that
 * a second checkout may be using.
 */
export function venvDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(epicsperfHome(env), `venv-${requirementsHash().slice(0, 12)}`);
}

function requirementsHash(): string {
  return createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex');
}

function venvPython(dir: string): string {
  return join(dir, 'bin', 'python');
}

export interface PythonEnvStatus {
  /** The interpreter that runs the IOC and the runners. */
  python: string;
  /** 'external' when EPICSPERF_PYTHON names it, 'managed' for the venv. */
  kind: 'external' | 'managed';
  /** True when the interpreter exists and (for the venv) matches python/requirements.txt. */
  ready: boolean;
  dir?: string;
}

export function pythonEnvStatus(env: NodeJS.ProcessEnv = process.env): PythonEnvStatus {
  if (env.EPICSPERF_PYTHON) {
    const python = env.EPICSPERF_PYTHON;
    return { python, kind: 'external', ready: existsSync(python) };
  }
  const dir = venvDir(env);
  const python = venvPython(dir);
  let ready = false;
  try {
    ready = existsSync(python) && readFileSync(join(dir, MARKER), 'utf8').trim() === requirementsHash();
  } catch {
    ready = false;
  }
  return { python, kind: 'managed', ready, dir };
}

/** The base interpreter used to create the venv: $EPICSPERF_BASE_PYTHON, else python3 on PATH. */
function findBasePython(env: NodeJS.ProcessEnv): string {
  const candidates = env.EPICSPERF_BASE_PYTHON ? [env.EPICSPERF_BASE_PYTHON] : ['python3', 'python'];
  for (const cmd of candidates) {
    const r = spawnSync(cmd, ['-c', 'import sys, venv; print("%d.%d" % sys.version_info[:2])'], {
      encoding: 'utf8',
    });
    if (r.status === 0) {
      const [major, minor] = r.stdout.trim().split('.').map(Number);
      if (major === 3 && (minor ?? 0) >= 9) return cmd;
      throw new PythonEnvError(
        `${cmd} is Python ${r.stdout.trim()}; epicsperf needs Python >= 3.9 with venv: install it or set EPICSPERF_BASE_PYTHON`,
      );
    }
  }
  throw new PythonEnvError(
    'Python 3 (>= 3.9, with the venv module) was not found: install python3 and python3-venv, or set EPICSPERF_PYTHON to an interpreter that has the packages of python/requirements.txt',
  );
}

function run(cmd: string, args: string[], what: string, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // Stopped with the command (a signal, an error elsewhere): pip and what it started.
    killOnExit(child, { tree: true });
    const tail: string[] = [];
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLine(line);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (err) => reject(new PythonEnvError(`${what} failed to start: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0) return resolvePromise();
      const last = tail.filter((l) => /error/i.test(l)).pop() ?? tail.pop() ?? '';
      reject(new PythonEnvError(`${what} failed (exit ${code}): ${last.trim()}`));
    });
  });
}

/** pip, with what to do when it fails. */
async function runPip(py: string, args: string[], onLine: (line: string) => void): Promise<void> {
  try {
    await run(py, args, 'pip install', onLine);
  } catch (err) {
    throw new PythonEnvError(
      `${(err as Error).message} (check access to the Python package index, or set EPICSPERF_PYTHON to an interpreter that has the packages of python/requirements.txt)`,
    );
  }
}

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv;
  /** Progress lines (for a person watching); defaults to stderr. */
  progress?: (line: string) => void;
  /** Rebuild even if the environment looks ready. */
  force?: boolean;
}

/**
 * Make sure the Python environment exists and matches python/requirements.txt; return its
 * interpreter. Creates the venv on first use, with visible progress. Safe to call from several
 * processes at once: one builds, the others wait.
 */
export async function ensurePythonEnv(opts: EnsureOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  const progress = opts.progress ?? toStderr;
  const status = pythonEnvStatus(env);
  if (status.kind === 'external') {
    if (!status.ready) throw new PythonEnvError(`EPICSPERF_PYTHON=${status.python} does not exist`);
    return status.python;
  }
  if (status.ready && !opts.force) return status.python;

  const dir = status.dir!;
  mkdirSync(dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  const release = await acquireLock(lock, () => progress('another epicsperf process is setting up the Python environment; waiting'));
  try {
    const again = pythonEnvStatus(env);
    if (again.ready && !opts.force) return again.python;
    const base = findBasePython(env);
    // A line at least every 8 s: creating the venv and installing a wheel say nothing for longer.
    const w = watch('setting up the Python environment', { progress });
    try {
      w.say(`creating the Python environment in ${dir} (once; later runs reuse it)`);
      rmSync(dir, { recursive: true, force: true });
      await run(base, ['-m', 'venv', dir], 'creating the Python virtual environment', (l) => log.debug(l));
      const py = venvPython(dir);
      w.say('installing the pinned packages of python/requirements.txt (a few minutes on first use)');
      await runPip(py, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-r', REQUIREMENTS], (line) => {
        log.debug(line);
        const m = /^(Collecting|Installing collected packages|Successfully installed)\s+(.*)$/.exec(line);
        // The packages fetched as progress (throttled); the install and its end at once.
        if (m) (m[1] === 'Collecting' ? w.progress : w.say)(`${m[1]} ${m[2]!.slice(0, 100)}`);
      });
      writeFileSync(join(dir, MARKER), requirementsHash() + '\n');
      w.say(`Python environment ready (${w.elapsed()})`);
      return py;
    } finally {
      w.stop();
    }
  } finally {
    release();
  }
}

/** A Python distribution's version, undefined when it cannot be read. */
export function libraryVersion(python: string, distribution: string): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile(python, ['-c', `import importlib.metadata as m; print(m.version(${JSON.stringify(distribution)}))`], (err, out) =>
      resolve(err ? undefined : out.trim()),
    ),
  );
}
