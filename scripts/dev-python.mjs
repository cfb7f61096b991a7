// The Python side's development tools, ruff, mypy and pytest (pinned in python/requirements-dev.txt):
// one venv of their own, $EPICSPERF_HOME/dev-venv-<hash of that file>, installed once, apart from
// the managed environment (whose requirements.txt they stay out of). lint-python.mjs and
// test-python.mjs take their interpreter from ensureDevPython().
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { epicsperfHome } from '../packages/epicsperf/dist/home.js';
import { PYTHON_DIR } from '../packages/epicsperf/dist/pyenv/index.js';

export { PYTHON_DIR };
const REQUIREMENTS = join(PYTHON_DIR, 'requirements-dev.txt');
const MARKER = 'installed';
/** The .pth file that puts another interpreter's packages on the dev venv's path. */
const RUNTIME_PTH = 'epicsperf-runtime.pth';

// What an interpreter is (its extension suffix: implementation, version, ABI), the real file it
// runs (a venv's python is a link to its base), and where its packages are.
const PROBE =
  'import json, os, sys, sysconfig; p = sysconfig.get_paths(); ' +
  'print(json.dumps([sysconfig.get_config_var("EXT_SUFFIX"), os.path.realpath(sys.executable), p["purelib"], p["platlib"]]))';

/** What PROBE says of an interpreter; undefined when it does not run. */
function probe(python) {
  const r = spawnSync(python, ['-c', PROBE], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const [abi, executable, purelib, platlib] = JSON.parse(r.stdout);
  return { abi, executable, purelib, sitePackages: [...new Set([purelib, platlib])] };
}

function check(cmd, args, what) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`})`);
}

/**
 * The dev venv's interpreter; the venv is made and its tools installed on first use, and the
 * marker written only once that succeeded. With `runtime` (the managed environment's interpreter,
 * or EPICSPERF_PYTHON's), the venv also sees that interpreter's packages, named by a .pth file in
 * its site-packages, so that mypy and pytest import the runtime packages without a second copy;
 * the venv is then made from that interpreter's base, and made again when an earlier one is of
 * another Python (version or ABI), whose compiled packages would not load in it.
 */
export function ensureDevPython({ runtime, env = process.env } = {}) {
  const home = epicsperfHome(env);
  const hash = createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex').slice(0, 12);
  const venv = join(home, `dev-venv-${hash}`);
  const python = join(venv, 'bin', 'python');
  const target = runtime ? probe(runtime) : undefined;
  if (runtime && !target) throw new Error(`${runtime} does not run`);
  let own = existsSync(join(venv, MARKER)) ? probe(python) : undefined;
  if (!own || (target && own.abi !== target.abi)) {
    // From the runtime's base interpreter, not from a venv that may be replaced.
    const base = target?.executable ?? env.EPICSPERF_BASE_PYTHON ?? 'python3';
    process.stderr.write(`installing ruff, mypy and pytest from ${relative(process.cwd(), REQUIREMENTS)} into ${venv}\n`);
    rmSync(venv, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    check(base, ['-m', 'venv', venv], `creating ${venv} with ${base}`);
    check(
      python,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-q', '-r', REQUIREMENTS],
      `installing ${REQUIREMENTS}`,
    );
    writeFileSync(join(venv, MARKER), '');
    own = probe(python);
    if (!own) throw new Error(`${python} does not run`);
  }
  // Written on each use: the managed environment it names changes with requirements.txt.
  if (target) writeFileSync(join(own.purelib, RUNTIME_PTH), `${target.sitePackages.join('\n')}\n`);
  return python;
}
