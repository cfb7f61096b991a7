// How a command ends on an error: one line on stderr, a non-zero exit (2 when the input was at
// fault), never a stack trace.
import { type Command, CommanderError } from 'commander';
import { OpsError } from '../errors.js';

export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

export interface ExitOptions {
  /** The program's name, first on the line. */
  program: string;
  /** Whether an error that is not this package's was the user's input at fault. */
  isInputError?: (err: unknown) => boolean;
  /** Where the stack goes (a debug log), if anywhere. */
  debug?: (stack: string | undefined) => void;
}

export function reportAndExit(err: unknown, o: ExitOptions): never {
  const e = err instanceof Error ? err : new Error(String(err));
  o.debug?.(e.stack);
  const message = e.message.split('\n')[0] ?? 'unknown error';
  process.stderr.write(`${o.program}: error: ${message}\n`);
  process.exitCode = err instanceof OpsError || o.isInputError?.(err) ? EXIT_USAGE : EXIT_FAILURE;
  // Let pending cleanups (an IOC stop) finish; a lingering handle must not keep us alive.
  setTimeout(() => process.exit(), 10_000).unref();
  throw new CliExit();
}

/** Thrown to unwind after the error has been reported. */
export class CliExit extends Error {}

/** Runs a program's command line: commander's own errors exit 2 (it has printed them), any other
 *  is reported in one line (reportAndExit). */
export async function runProgram(program: Command, o: ExitOptions): Promise<void> {
  for (const sub of program.commands) sub.exitOverride();
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CliExit) return;
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    try {
      reportAndExit(err, o);
    } catch {
      // reported
    }
  }
}
