// ruff on the Python package (packages/epicsperf/python, settings in its pyproject.toml), at the
// version pinned in its requirements-dev.txt, from the dev venv (dev-python.mjs); the managed
// environment is not needed. Arguments go to ruff check.
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { ensureDevPython, PYTHON_DIR } from './dev-python.mjs';

const python = ensureDevPython();
const args = ['-m', 'ruff', 'check', '--no-cache', relative(process.cwd(), PYTHON_DIR) || '.', ...process.argv.slice(2)];
process.exit(spawnSync(python, args, { stdio: 'inherit' }).status ?? 1);
