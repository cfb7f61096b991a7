// One-shot helpers that run in a Context of their own and close it afterwards.
import type { FormName } from '../ca/constants.js';
import type { ContextOptions } from '../transport/config.js';
import { Context } from './context.js';
import type { PvaReading } from './pva/reading.js';
import type { PvaSnapshotOptions } from './pva/snapshot.js';
import type { ReadingOf } from './ca/reading.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';

/** A snapshot's options, and the options of the context it makes for itself. @inline */
type Options = SnapshotOptions & PvaSnapshotOptions & { context?: ContextOptions };

/**
 * Read many PVs once in a fresh Context (closed afterwards); one result per name, never a
 * rejection. Names are CA's unless prefixed `pva://`; the results are typed as PvaReadings when
 * every name is, else as CA readings of the snapshot's form.
 */
export async function snapshot(names: readonly `pva://${string}`[], opts?: Options): Promise<SnapshotResult<PvaReading>[]>;
export async function snapshot<F extends FormName = 'time'>(
  names: readonly string[],
  opts?: Options & { form?: F },
): Promise<SnapshotResult<ReadingOf<F>>[]>;
export async function snapshot(names: readonly string[], opts: Options = {}): Promise<SnapshotResult<ReadingOf<FormName> | PvaReading>[]> {
  const ctx = new Context(opts.context);
  try {
    return await ctx.snapshot(names, opts);
  } finally {
    await ctx.close();
  }
}
