// `npm test` after the build: the first builds (the managed Python environment, the C, C++, Java
// and Rust runners: `epicsperf setup`, a few minutes on a fresh machine, nothing when they are
// current) start at once in the background, at a lower priority, while the checks that need none
// of them run side by side (type check, lint, ruff, Chromium); then vitest, whose files wait for a
// build they need (the builds hold a lock) and not for the others, with the Python package's
// checks beside it (they wait for the Python environment).
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
    if (opts.onOutput) for (const s of [child.stdout, child.stderr]) s?.on('data', opts.onOutput);
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
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

/** Run a command with its output kept, to be shown when it ends: commands run side by side do not interleave. */
async function quiet(command, args) {
  const out = [];
  const code = await run(command, args, { stdio: ['ignore', 'pipe', 'pipe'], onOutput: (d) => out.push(d) });
  return { command: [command, ...args].join(' '), code, output: Buffer.concat(out).toString() };
}

function failed(step) {
  process.stdout.write(step.output);
  process.stderr.write(`npm test: ${step.command} failed (exit ${step.code}) after ${since()}\n`);
  stopAll();
  process.exit(step.code);
}

// The quick checks side by side: the type check, the linters, and Chromium's install (which says
// what it does as it goes).
const chromium = ['sh', ['scripts/ensure-chromium.sh']];
const checks = await Promise.all([
  quiet(npm, ['run', '--silent', 'typecheck']),
  quiet(npm, ['run', '--silent', 'lint']),
  quiet(npm, ['run', '--silent', 'lint:python']),
  run(...chromium).then((code) => ({ command: chromium.flat().join(' '), code, output: '' })),
]);
for (const c of checks) if (c.code !== 0) failed(c);
for (const c of checks) process.stdout.write(c.output);
// The Python package's checks need the managed environment, which the first builds make (about a
// minute on a fresh machine): they run beside vitest, whose unit files need none of it, and say
// what they found when they end (at once if they fail).
const python = quiet(npm, ['run', '--silent', 'test:python']).then((c) => (c.code === 0 ? c : failed(c)));
const code = await run(process.execPath, [vitest, 'run', ...process.argv.slice(2)]);
if (code !== 0) {
  process.stderr.write(`npm test: vitest failed (exit ${code}) after ${since()}\n`);
  stopAll();
  process.exit(code);
}
const py = await python;
process.stdout.write(py.output);
const built = await setup;
process.stderr.write(`npm test: done in ${since()}${built === 0 ? '' : `; epicsperf setup exited ${built}`}\n`);
process.exit(built);
