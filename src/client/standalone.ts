// One-shot helpers that run in a Context of their own and close it afterwards.
import type { FormName } from '../ca/constants.js';
import type { ContextOptions } from '../transport/config.js';
import { Context } from './context.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';

/** Read many PVs once in a fresh Context (closed afterwards); one result per name, never a rejection. */
export async function snapshot<F extends FormName = 'time'>(
  names: readonly string[],
  opts: SnapshotOptions & { form?: F; context?: ContextOptions } = {},
): Promise<SnapshotResult<F>[]> {
  const ctx = new Context(opts.context);
  try {
    return await ctx.snapshot<F>(names, opts);
  } finally {
    await ctx.close();
  }
}
