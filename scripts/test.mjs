// `npm test` after the build: the first builds (the managed Python environment, the C, C++, Java
// and Rust runners: `epicsperf setup`, a few minutes on a fresh machine, nothing when they are
// current) start at once in the background, at a lower priority, while the checks that need none
// of them run (type check, lint, ruff, Chromium); then the Python package's checks, then vitest,
// whose files wait for a build they need (the builds hold a lock) and not for the others.
// Arguments go to vitest. Exit: the first failure's code.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EPICSPERF = fileURLToPath(new URL('../packages/epicsperf/bin/epicsperf.js', import.meta.url));
const children = new Set();

/** Run a command with the terminal; resolves to its exit code. */
function run(command, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: opts.stdio ?? 'inherit', env: opts.env ?? process.env });
    children.add(child);
    child.on('error', (err) => {
      process.stderr.write(`npm test: cannot run ${command}: ${err.message}\n`);
      resolve(127);
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

const stopAll = () => {
  for (const c of children) c.kill('SIGTERM');
};
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    stopAll();
    process.exit(130);
  });

const started = Date.now();
const since = () => `${Math.round((Date.now() - started) / 1000)} s`;
// nice: the builds take the cores the checks and the tests leave idle. Its report (stdout) is
// not wanted here; its progress goes to stderr as it comes.
// The Rust runners as the tests build them (vitest.config.ts: EPICSPERF_RUST_PROFILE).
const setup = run('nice', ['-n', '10', process.execPath, EPICSPERF, 'setup'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, EPICSPERF_RUST_PROFILE: 'quick' },
});

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const steps = [
  [npm, ['run', '--silent', 'typecheck']],
  [npm, ['run', '--silent', 'lint']],
  [npm, ['run', '--silent', 'lint:python']],
  ['sh', ['scripts/ensure-chromium.sh']],
  [npm, ['run', '--silent', 'test:python']],
  [process.execPath, [fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url)), 'run', ...process.argv.slice(2)]],
];
for (const [command, args] of steps) {
  const code = await run(command, args);
  if (code !== 0) {
    process.stderr.write(`npm test: ${[command, ...args].join(' ')} failed (exit ${code}) after ${since()}\n`);
    stopAll();
    process.exit(code);
  }
}
const built = await setup;
process.stderr.write(`npm test: done in ${since()}${built === 0 ? '' : `; epicsperf setup exited ${built}`}\n`);
process.exit(built);
