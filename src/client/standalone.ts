// One-shot helpers that run in a Context of their own and close it afterwards.
import type { ContextOptions } from '../transport/config.js';
import { Context } from './context.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';

/** Read many PVs once in a fresh Context (closed afterwards); one result per name, never a rejection. */
export async function snapshot(
  names: readonly string[],
  opts: SnapshotOptions & { context?: ContextOptions } = {},
): Promise<SnapshotResult[]> {
  const ctx = new Context(opts.context);
  try {
    return await ctx.snapshot(names, opts);
  } finally {
    await ctx.close();
  }
}
