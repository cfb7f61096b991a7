// pytest on the Python package (packages/epicsperf/python/tests) in the managed Python
// environment, where the package runs (pytest is pinned in its requirements.txt); the
// environment is built on first use. Run by `npm test` after the build.
import { spawnSync } from 'node:child_process';
import { ensurePythonEnv, PYTHON_DIR } from '../packages/epicsperf/dist/pyenv/index.js';

const python = await ensurePythonEnv();
const r = spawnSync(python, ['-m', 'pytest', ...process.argv.slice(2)], {
  cwd: PYTHON_DIR,
  stdio: 'inherit',
  env: { ...process.env, PYTHONPATH: PYTHON_DIR },
});
process.exit(r.status ?? 1);
