// The environment file `epicsperf ioc --write-env` writes (NAME=value lines), for the benchmark
// scripts that reach a running IOC.
import { readFileSync } from 'node:fs';

/** The variables of an IOC's environment file. */
export function readIocEnv(file) {
  const env = {};
  for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
    const i = line.indexOf('=');
    env[line.slice(0, i)] = line.slice(i + 1);
  }
  return env;
}

/** Set this process's environment from an IOC's environment file. */
export function loadIocEnv(file) {
  Object.assign(process.env, readIocEnv(file));
}
