// Runs the real binaries as a user does: epicsperf's (bin/epicsperf.js) and epics-ops's
// (bin/epics-ops.js), each on its package's built dist/.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../epicsperf/bin/epicsperf.js', import.meta.url));
export const OPS_BIN = fileURLToPath(new URL('../../ops/bin/epics-ops.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliOptions {
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
  /** The binary to run: BIN (the default) or OPS_BIN. */
  bin?: string;
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], {
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 60_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(opts.input ?? '');
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 }));
  });
}

/** runCli on epics-ops's binary. */
export const runOps = (args: string[], opts: Omit<CliOptions, 'bin'> = {}): Promise<CliResult> => runCli(args, { ...opts, bin: OPS_BIN });

/** The lines of `stderr` a program's errors begin with (`epicsperf: ...`, `epics-ops: ...`). */
export const errorLines = (stderr: string, program = 'epicsperf'): string[] =>
  stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith(`${program}:`));
