// One run of a client's runner, the same for every workload: under its deadline, which the phases
// are told to; asked to exit when the work is done, killed when it fails or its deadline passes;
// and why a run failed, in one wording for every workload.
import { RunnerError } from '../errors.js';
import { ClientDeadline } from './deadline.js';
import type { Runner } from './process.js';

/** What every run's result says of how it ended. */
export interface RunRecord {
  ok: boolean;
  error?: string | undefined;
  /** Seconds from its start when its deadline stopped it. */
  stoppedAfterS?: number | undefined;
}

/** Why a run failed: its deadline's note, a reason of the caller's (its memory), the runner's own error, or an unexpected one. */
export function failureOf(err: unknown, deadline: ClientDeadline | undefined, reason?: string): string {
  if (deadline?.stoppedAfterS !== undefined) return deadline.note();
  if (reason) return reason;
  return err instanceof RunnerError ? err.message : `unexpected: ${(err as Error).message}`;
}

export interface RunOnceOptions {
  /** Past this (ms) the runner is killed and the run says in which phase. */
  deadlineMs?: number | undefined;
  onProgress?: ((text: string) => void) | undefined;
  /** Why the run failed when the caller knows better than the error (it killed the runner for its memory). */
  reason?: () => string | undefined;
}

/**
 * Run `body` against a started runner, with a progress function that tells the deadline the
 * phase; the runner exits when `body` returns and is killed when it throws or the deadline
 * passes, `result.error` (and `stoppedAfterS`) then saying why. A run its deadline stopped is
 * not ok, whatever it had done by then.
 */
export async function runOnce<R extends RunRecord>(
  runner: Runner,
  result: R,
  o: RunOnceOptions,
  body: (progress: (text: string) => void) => Promise<void>,
): Promise<R> {
  const deadline = new ClientDeadline(runner, o.deadlineMs);
  const progress = deadline.track(o.onProgress ?? (() => {}));
  try {
    await body(progress);
    await runner.finish();
  } catch (err) {
    result.error = failureOf(err, deadline, o.reason?.());
    await runner.kill();
  } finally {
    deadline.clear();
  }
  if (deadline.stoppedAfterS !== undefined) {
    result.ok = false;
    result.stoppedAfterS = deadline.stoppedAfterS;
    result.error = deadline.note();
  }
  return result;
}
