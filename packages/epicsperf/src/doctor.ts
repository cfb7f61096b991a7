// The environment report (`epicsperf doctor`): machine, runtimes and every client library's
// version or why it is missing. Stored with every benchmark result.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from './home.js';
import { pythonEnvStatus, pythonModule } from './pyenv/index.js';
import type { EnvironmentReport, LibraryStatus } from './results/index.js';
import { javaLibraries, javaToolchain } from './toolchains/jvm.js';
import { rustLibraries, rustToolchain } from './toolchains/cargo.js';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function runJson(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env }, timeout: timeoutMs });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(err.trim().split('\n').pop() || `exit code ${code}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error('unreadable output'));
      }
    });
  });
}

/** The package.json of `name` as Node finds it from this package (in its node_modules or an enclosing one). */
function installed(name: string): string {
  for (let dir = PACKAGE_ROOT; ; dir = dirname(dir)) {
    const p = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(p) || dirname(dir) === dir) return p;
  }
}

/**
 * Versions of client libraries on the Node side (looked up, never imported), and of the Java and
 * Rust ones (as their pom and lock file pin them; the runners are built on first use).
 */
function nodeLibraries(): Record<string, LibraryStatus> {
  const out: Record<string, LibraryStatus> = {};
  for (const [name, version] of Object.entries({ ...javaLibraries(), ...rustLibraries() })) out[name] = { version };
  for (const name of ['epics-tca']) {
    try {
      const pkg = JSON.parse(readFileSync(installed(name), 'utf8')) as { version: string };
      out[name] = { version: pkg.version };
    } catch {
      out[name] = { error: 'not installed (npm install)' };
    }
  }
  return out;
}

export async function doctor(): Promise<EnvironmentReport> {
  const status = pythonEnvStatus();
  const cpuList = cpus();
  const [java, rust] = await Promise.all([javaToolchain(), rustToolchain()]);
  const report: EnvironmentReport = {
    epicsperf: packageVersion(),
    node: process.version,
    os: { platform: platform(), release: release(), arch: arch() },
    cpu: { model: cpuList[0]?.model.trim() ?? 'unknown', cores: cpuList.length },
    memoryBytes: totalmem(),
    python: { executable: status.python, kind: status.kind, ready: status.ready },
    libraries: nodeLibraries(),
    toolchains: { ...java, ...rust },
  };
  if (!status.ready) {
    report.python.error =
      status.kind === 'external' ? 'EPICSPERF_PYTHON does not exist' : 'the managed environment is not set up: run `npx epicsperf setup`';
    return report;
  }
  try {
    const module = pythonModule('doctor');
    const py = (await runJson(status.python, module.args, module.env, 60_000)) as {
      python: string;
      packages: Record<string, LibraryStatus>;
    };
    report.python.version = py.python;
    Object.assign(report.libraries, py.packages);
  } catch (err) {
    report.python.error = (err as Error).message;
  }
  return report;
}
