// What a snapshot returns: one result per name, in input order (value, alarm, timestamp and the
// time it took, or why that name failed), and its options.
import type { EpicsError } from './errors.js';
import type { ReadOptions } from './options.js';
import type { TimeReading } from './ca/reading.js';

export interface SnapshotOptions extends ReadOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  /** Abort: every name still pending fails with an aborted error. */
  signal?: AbortSignal;
}

/**
 * A name that answered: its reading `R` with the name and the time it took. Over CA `R` is the
 * reading of the snapshot's form (TimeReading by default: value, alarm and timestamp; a GR or
 * CTRL snapshot's carry metadata and no timestamp), over PV Access a PvaReading.
 */
export type SnapshotSuccess<R extends { readonly value: unknown } = TimeReading> = R & {
  readonly name: string;
  readonly ok: true;
  /** Milliseconds from the start of the snapshot to this answer. */
  readonly elapsedMs: number;
  readonly reading: R;
};

export interface SnapshotFailure {
  name: string;
  ok: false;
  error: EpicsError;
  code: EpicsError['code'];
  elapsedMs: number;
}

export type SnapshotResult<R extends { readonly value: unknown } = TimeReading> = SnapshotSuccess<R> | SnapshotFailure;
