// Proves an IOC is serving: a real Channel Access client reads one PV from it.
import { spawn } from 'node:child_process';
import { ensurePythonEnv } from '../pyenv/index.js';

const PROBE = `
import sys, epics
v = epics.caget(sys.argv[1], timeout=float(sys.argv[2]))
sys.exit(0 if v is not None else 3)
`;

/** Resolve once `name` has been read over CA with the given client environment. */
export async function probeCa(env: Record<string, string>, name: string, timeoutMs: number): Promise<void> {
  const python = await ensurePythonEnv();
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < deadline) {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(python, ['-c', PROBE, name, '2'], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (c) => {
        lastErr = err.trim().split('\n').pop() ?? '';
        resolve(c);
      });
    });
    if (code === 0) return;
  }
  throw new Error(`no CA client could read ${name} from the IOC: ${lastErr}`);
}
