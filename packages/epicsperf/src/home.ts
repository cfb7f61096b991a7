// Where epicsperf keeps its state (the Python venv, compiled runners, kept results): one folder,
// chosen by the environment; and where the installed package itself lives.
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the installed package (where clients.json, python/, c/, java/ and rust/ live). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where epicsperf keeps its state: $EPICSPERF_HOME, else $XDG_CACHE_HOME/epicsperf, else ~/.cache/epicsperf. */
export function epicsperfHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.EPICSPERF_HOME) return resolve(env.EPICSPERF_HOME);
  const cache = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(cache, 'epicsperf');
}
