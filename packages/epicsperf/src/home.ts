// Where epicsperf keeps its state (the Python venv, compiled runners, kept results): one folder,
// chosen by the environment.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where epicsperf keeps its state: $EPICSPERF_HOME, else $XDG_CACHE_HOME/epicsperf, else ~/.cache/epicsperf. */
export function epicsperfHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.EPICSPERF_HOME) return resolve(env.EPICSPERF_HOME);
  const cache = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(cache, 'epicsperf');
}
