// The Python package's own checks: mypy --strict on the package and its tests (settings in
// python/pyproject.toml), then pytest (packages/epicsperf/python/tests). Both come from the dev
// venv (dev-python.mjs, pinned in requirements-dev.txt), which sees the packages of the
// environment the package runs in: the managed one (built on first use) or EPICSPERF_PYTHON.
// Run by `npm test` after the build; arguments go to pytest.
import { spawnSync } from 'node:child_process';
import { ensurePythonEnv } from '../packages/epicsperf/dist/pyenv/index.js';
import { ensureDevPython, PYTHON_DIR } from './dev-python.mjs';

const python = ensureDevPython({ runtime: await ensurePythonEnv() });
const run = (args) =>
  spawnSync(python, args, { cwd: PYTHON_DIR, stdio: 'inherit', env: { ...process.env, PYTHONPATH: PYTHON_DIR } }).status ?? 1;
const typed = run(['-m', 'mypy']);
if (typed !== 0) process.exit(typed);
process.exit(run(['-m', 'pytest', ...process.argv.slice(2)]));
