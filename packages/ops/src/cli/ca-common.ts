// What the `ca` commands share: their common flags, connecting with caget's message
// for a name not found, the read the C tools make, and the error for bad flag combinations.
import type { FormName, NativeTypeName } from 'epics-client/ca';
import { AccessDeniedError, EpicsError, NotFoundError, TimeoutError, type Context, type ChannelInfo, type GetOptions } from 'epics-client';
import type { LineStyle } from './ca-format.js';

export interface CommonFlags {
  w: number;
  n?: boolean;
  '#'?: number;
  S?: boolean;
  F?: string;
}

/** A bad combination of flags or values (exit 2). */
export class UsageError extends Error {}

export function styleOf(o: CommonFlags, withCount: boolean): LineStyle {
  return { separator: o.F ?? ' ', withCount, charAsString: o.S === true };
}

/** Connect to every name at once; prints caget's message for each one not found. */
export async function connectAll(ctx: Context, names: string[], seconds: number): Promise<Array<ChannelInfo | undefined>> {
  const pva = names.find((n) => n.startsWith('pva://'));
  if (pva !== undefined) throw new UsageError(`${pva} is a PV Access name; the ca commands speak Channel Access`);
  const timeout = seconds * 1000;
  const infos = await Promise.all(names.map((n) => ctx.info(n, { timeout }).catch((e: unknown) => e)));
  return infos.map((x, i) => {
    if (x instanceof NotFoundError || x instanceof TimeoutError) {
      process.stderr.write(`Channel connect timed out: '${names[i]}' not found.\n`);
      return undefined;
    }
    if (x instanceof Error) throw x;
    return x as ChannelInfo;
  });
}

/**
 * The read the C tools make for plain output: native type, enums as strings (or numbers with -n);
 * `full` (caget without -c, caput) reads an array's element count, which the server fills past
 * the current length (zeros), as their ca_array_get does; else the current length (count 0).
 */
export function readOptionsFor(info: ChannelInfo, o: CommonFlags, form: FormName, full = false): GetOptions & { form: FormName } {
  let type: NativeTypeName = info.nativeType;
  if (type === 'enum') type = o.n ? 'short' : 'string';
  const count = o['#'] ?? (full ? info.elementCount : undefined);
  const longString = o.S === true && info.nativeType === 'char' && (o['#'] !== undefined || info.elementCount > 1);
  return { type, form, count, longString };
}

/** The text of a read that failed, as caget prints it in place of the value. */
export function failureText(e: unknown): string {
  if (e instanceof AccessDeniedError) return '*** no read access';
  if (e instanceof EpicsError) return `*** CA error ${e.message}`;
  return `*** ${(e as Error)?.message ?? String(e)}`;
}
