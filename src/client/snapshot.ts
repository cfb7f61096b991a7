// What a snapshot returns: one result per name, in input order (value, alarm, timestamp and the
// time it took, or why that name failed), and its options.
import type { FormName } from '../ca/constants.js';
import type { CaError } from './errors.js';
import type { ReadOptions } from './options.js';
import type { ReadingOf } from './reading.js';

export interface SnapshotOptions extends ReadOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  /** Abort: every name still pending fails with an aborted error. */
  signal?: AbortSignal;
}

/**
 * A name that answered: its reading (of the snapshot's form, 'time' by default: value, alarm and
 * timestamp) with the name and the time it took.
 */
export type SnapshotSuccess<F extends FormName = 'time'> = ReadingOf<F> & {
  readonly name: string;
  readonly ok: true;
  /** Milliseconds from the start of the snapshot to this answer. */
  readonly elapsedMs: number;
  readonly reading: ReadingOf<F>;
};

export interface SnapshotFailure {
  name: string;
  ok: false;
  error: CaError;
  code: CaError['code'];
  elapsedMs: number;
}

export type SnapshotResult<F extends FormName = 'time'> = SnapshotSuccess<F> | SnapshotFailure;
