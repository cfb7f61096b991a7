// Choosing what to ask for (DBR type, element count, array size limit) and turning a JS value
// into the payload of a put for a channel's native type, with clear errors for bad values.
import { DbrType, FORM_NAMES, NATIVE_TYPE_NAMES } from '../../ca/constants.js';
import { DECODE_AS_ARRAY, DECODE_LONG_STRING, dbrLayout, dbrTypeOf } from '../../ca/dbr.js';
import { encodeDbr, isBytes } from '../../ca/dbr-encode.js';
import type { Channel } from './channel.js';
import { BadArgumentError } from '../errors.js';
import type { PutValue, ReadOptions } from '../options.js';

export interface ReadPlan {
  dbrType: number;
  count: number;
  /** DECODE_AS_ARRAY and DECODE_LONG_STRING as the replies are to be decoded. */
  decodeFlags: number;
}

/** Decide the DBR type and count of a read or subscription on a connected channel. */
export function planRead(ch: Channel, opts: ReadOptions, maxArrayBytes: number, serverVersion: number): ReadPlan {
  const typeName = opts.type ?? 'native';
  let native: number;
  if (typeName === 'native') native = ch.nativeType;
  else {
    native = NATIVE_TYPE_NAMES.indexOf(typeName);
    if (native < 0) throw new BadArgumentError(`unknown type '${String(typeName)}'`, ch.name);
  }
  if (native < 0 || native > 6) throw new BadArgumentError(`channel has unsupported native type ${ch.nativeType}`, ch.name);
  const formName = opts.form ?? 'time';
  const form = FORM_NAMES.indexOf(formName);
  if (form < 0) throw new BadArgumentError(`unknown form '${String(formName)}'`, ch.name);
  const dbrType = dbrTypeOf(native as 0, form as 0);
  let count = opts.count ?? (ch.nativeCount > 1 && serverVersion >= 13 ? 0 : Math.max(1, ch.nativeCount));
  if (!Number.isInteger(count) || count < 0) throw new BadArgumentError(`count must be a non-negative integer, got ${count}`, ch.name);
  if (count > ch.nativeCount && ch.nativeCount > 0) count = ch.nativeCount;
  const layout = dbrLayout(dbrType)!;
  const elements = count === 0 ? ch.nativeCount : count;
  const bytes = layout.valueOffset + elements * layout.elementSize;
  if (bytes > maxArrayBytes) {
    throw new BadArgumentError(
      `${elements} elements (${bytes} bytes) exceed EPICS_CA_MAX_ARRAY_BYTES=${maxArrayBytes}; raise it or ask for fewer`,
      ch.name,
    );
  }
  return {
    dbrType,
    count,
    decodeFlags:
      (ch.nativeCount > 1 || (opts.count ?? 1) > 1 ? DECODE_AS_ARRAY : 0) |
      (opts.longString === true && native === DbrType.CHAR ? DECODE_LONG_STRING : 0),
  };
}

const INT_RANGE: Record<number, [number, number]> = {
  [DbrType.SHORT]: [-32768, 32767],
  [DbrType.ENUM]: [0, 65535],
  [DbrType.CHAR]: [0, 255],
  [DbrType.LONG]: [-2147483648, 2147483647],
};

function toNumber(v: unknown, name: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const s = v.trim();
    const n = /^[-+]?inf(inity)?$/i.test(s)
      ? s.startsWith('-')
        ? -Infinity
        : Infinity
      : /^nan$/i.test(s)
        ? NaN
        : s === ''
          ? NaN
          : Number(s);
    if (Number.isNaN(n) && !/^nan$/i.test(s)) throw new BadArgumentError(`'${v}' is not a number, and the channel is numeric`, name);
    return n;
  }
  throw new BadArgumentError(`cannot write a ${v === null ? 'null' : typeof v} to a numeric channel`, name);
}

/** Encode a value for a put to this channel: returns the DBR type, count and payload. */
export function encodePut(ch: Channel, value: PutValue): { dbrType: number; count: number; payload: Uint8Array } {
  const native = ch.nativeType;
  const name = ch.name;
  if (value === null || value === undefined) throw new BadArgumentError('cannot write null or undefined', name);
  const isList = typeof value === 'object';
  // A typed array of numbers is encoded as it is: no copy into a list of boxed numbers.
  const typed =
    isList &&
    ArrayBuffer.isView(value) &&
    !(value instanceof DataView) &&
    !(value instanceof BigInt64Array) &&
    !(value instanceof BigUint64Array)
      ? (value as unknown as ArrayLike<number>)
      : undefined;
  const list = isList && !typed ? Array.from(value as ArrayLike<unknown>) : undefined;
  if ((list ?? typed)?.length === 0) throw new BadArgumentError('cannot write an empty array', name);
  let dbrType: number;
  let enc: PutValue;
  if (native === DbrType.STRING || (native === DbrType.ENUM && typeof value === 'string')) {
    dbrType = DbrType.STRING;
    const items = list ?? (typed ? Array.from(typed) : undefined);
    enc = items ? items.map((x) => (typeof x === 'string' ? x : String(x))) : String(value);
  } else if (native === DbrType.CHAR && typeof value === 'string') {
    dbrType = DbrType.CHAR;
    enc = value;
  } else if (typed) {
    dbrType = native;
    // Bytes into a CHAR channel go as they are (an Int8Array's as their two's complement, as C's
    // char would): encodeDbr copies them in one step, no element needs a check.
    const range = native === DbrType.CHAR && isBytes(typed) ? undefined : INT_RANGE[native];
    if (range) {
      for (let i = 0; i < typed.length; i++) {
        const n = typed[i]!;
        if (!Number.isInteger(n) || n < range[0] || n > range[1]) {
          throw new BadArgumentError(`${n} does not fit a ${NATIVE_TYPE_NAMES[native]} channel (${range[0]}..${range[1]})`, name);
        }
      }
    }
    enc = typed;
  } else {
    dbrType = native;
    const nums = (list ?? [value]).map((x) => toNumber(x, name));
    const range = INT_RANGE[native];
    if (range) {
      for (const n of nums) {
        if (!Number.isInteger(n) || n < range[0] || n > range[1]) {
          throw new BadArgumentError(`${n} does not fit a ${NATIVE_TYPE_NAMES[native]} channel (${range[0]}..${range[1]})`, name);
        }
      }
    }
    enc = list ? nums : nums[0]!;
  }
  let out: { payload: Uint8Array; count: number };
  try {
    out = encodeDbr(dbrType, enc as never);
  } catch (e) {
    throw new BadArgumentError(`cannot encode the value: ${(e as Error).message}`, name);
  }
  if (ch.nativeCount > 0 && out.count > ch.nativeCount) {
    throw new BadArgumentError(`${out.count} elements do not fit the channel's ${ch.nativeCount}`, name);
  }
  return { dbrType, count: out.count, payload: out.payload };
}
