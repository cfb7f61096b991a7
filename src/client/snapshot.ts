// What a snapshot returns: one result per name, in input order (value, alarm, timestamp and the
// time it took, or why that name failed), and its options.
import type { Reading } from '../ca/dbr.js';
import type { CaError } from './errors.js';
import type { ReadOptions } from './options.js';

export interface SnapshotOptions extends ReadOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  /** Abort: every name still pending fails with an aborted error. */
  signal?: AbortSignal;
}

/** One name's answer; `R` is the reading it carries (a CA Reading, or a PvaReading over PV Access). */
export interface SnapshotSuccess<R extends { value: unknown } = Reading> {
  readonly name: string;
  readonly ok: true;
  readonly value: R['value'];
  readonly severity: number;
  readonly status: number;
  /** The PV's timestamp (TIME form; the EPICS epoch when the form has none). */
  readonly timestamp: Date;
  readonly secondsPastEpoch: number;
  readonly nanoseconds: number;
  /** Milliseconds from the start of the snapshot to this answer. */
  readonly elapsedMs: number;
  readonly reading: R;
}

export interface SnapshotFailure {
  name: string;
  ok: false;
  error: CaError;
  code: CaError['code'];
  elapsedMs: number;
}

export type SnapshotResult<R extends { value: unknown } = Reading> = SnapshotSuccess<R> | SnapshotFailure;
