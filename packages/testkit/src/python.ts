// Runs a Python snippet in the managed environment (an independent real client) and parses its JSON.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ensurePythonEnv } from 'epicsperf/dist/pyenv/index.js';

export async function pythonJson<T = unknown>(script: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<T> {
  const python = await ensurePythonEnv();
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`python exited ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
      try {
        // client libraries print to stdout too (pyepics: "cannot connect to ..."): the JSON is the last line
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(new Error(`python printed no JSON: ${out.slice(0, 200)} ${err.slice(-300)}`));
      }
    });
  });
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    // a zombie (exited, not yet reaped by its new parent) is not alive
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

export async function waitGone(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}
