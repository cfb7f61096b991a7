// The Python package's own checks, in the managed Python environment where the package runs
// (mypy and pytest are pinned in its requirements.txt; the environment is built on first use):
// mypy --strict on the package and its tests (settings in python/pyproject.toml), then pytest
// (packages/epicsperf/python/tests). Run by `npm test` after the build; arguments go to pytest.
import { spawnSync } from 'node:child_process';
import { ensurePythonEnv, PYTHON_DIR } from '../packages/epicsperf/dist/pyenv/index.js';

const python = await ensurePythonEnv();
const run = (args) =>
  spawnSync(python, args, { cwd: PYTHON_DIR, stdio: 'inherit', env: { ...process.env, PYTHONPATH: PYTHON_DIR } }).status ?? 1;
const typed = run(['-m', 'mypy']);
if (typed !== 0) process.exit(typed);
process.exit(run(['-m', 'pytest', ...process.argv.slice(2)]));
