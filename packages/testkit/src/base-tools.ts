// EPICS base's caget, caput, camonitor and cainfo (built on first use from Debian's epics-base
// source against the wheel's libca), run as an operator runs them, for comparing outputs.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type BaseTool, buildBaseTools } from 'epicsperf/dist/toolchains/base-tools.js';
import { ensurePythonEnv } from 'epicsperf/dist/pyenv/index.js';

export type { BaseTool };

/** The folder of the built tools; a failed build is the caller's error. */
export async function baseTools(): Promise<string> {
  const built = await buildBaseTools(await ensurePythonEnv());
  if ('error' in built) throw new Error(built.error);
  return built.path;
}

/**
 * One tool's output (stdout and stderr, in order) with `env` over this process's, from the
 * folder `dir`; `killAfterMs` stops one that runs on (camonitor) with SIGINT.
 */
export async function runBaseTool(
  dir: string,
  tool: BaseTool,
  args: string[],
  env: Record<string, string>,
  killAfterMs?: number,
): Promise<string> {
  const child = spawn(join(dir, tool), args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), killAfterMs);
  await new Promise((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return out;
}
