// How the CLI ends on an error: one line on stderr, a non-zero exit, never a stack trace.
import { HarnessError } from '../errors.js';
import { getLogger } from '../log.js';

export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

export function reportAndExit(err: unknown): never {
  const e = err instanceof Error ? err : new Error(String(err));
  getLogger('cli').debug({ stack: e.stack }, 'error details');
  const message = e.message.split('\n')[0] ?? 'unknown error';
  process.stderr.write(`epicsperf: error: ${message}\n`);
  process.exitCode = err instanceof HarnessError && err.isInputError ? EXIT_USAGE : EXIT_FAILURE;
  // Let pending cleanups (an IOC stop) finish; a lingering handle must not keep us alive.
  setTimeout(() => process.exit(), 10_000).unref();
  throw new CliExit();
}

/** Thrown to unwind after the error has been reported. */
export class CliExit extends Error {}
