// Encoding of DBR payloads (big-endian, padded to 8 bytes): plain values for puts, and the
// STS/TIME/GR/CTRL forms a server sends (used by test servers and byte-vector tests).
import { DbrForm, MAX_ENUM_STATES, MAX_ENUM_STRING_SIZE, MAX_STRING_SIZE, MAX_UNITS_SIZE } from './constants.js';
import { ELEMENT_SIZE, dbrLayout, type DbrMetadata } from './dbr.js';
import { align8 } from './header.js';

export type EncodableValue = number | bigint | string | readonly string[] | ArrayLike<number>;

export interface EncodeExtras {
  status?: number;
  severity?: number;
  secondsPastEpoch?: number;
  nanoseconds?: number;
  metadata?: DbrMetadata;
}

const utf8 = new TextEncoder();

/** Bytes of a string value; throws RangeError when it does not fit `max` bytes with its NUL. */
export function encodeCString(s: string, max: number): Uint8Array {
  const b = utf8.encode(s);
  if (b.length >= max) throw new RangeError(`string of ${b.length} bytes does not fit ${max - 1}`);
  return b;
}

function writeNumber(view: DataView, off: number, native: number, v: number): void {
  switch (native) {
    case 1:
      view.setInt16(off, v);
      break;
    case 2:
      view.setFloat32(off, v);
      break;
    case 3:
      view.setUint16(off, v);
      break;
    case 4:
      view.setUint8(off, v);
      break;
    case 5:
      view.setInt32(off, v);
      break;
    default:
      view.setFloat64(off, v);
  }
}

/** Element count of a value as it would be encoded for this native type. */
export function valueCount(native: number, value: EncodableValue): number {
  if (typeof value === 'string') return native === 4 ? utf8.encode(value).length + 1 : 1;
  if (typeof value === 'number' || typeof value === 'bigint') return 1;
  return value.length;
}

/** Whether a value is an array of bytes (a DBR_CHAR payload as it is). */
export function isBytes(v: unknown): v is Uint8Array | Int8Array | Uint8ClampedArray {
  return v instanceof Uint8Array || v instanceof Int8Array || v instanceof Uint8ClampedArray;
}

/**
 * Encode `value` as DBR `type`; returns the padded payload and the element count (a plain DBR_CHAR
 * of a byte array is returned as a view of the caller's bytes, unpadded: the message encoder pads).
 * Throws RangeError/TypeError for values the type cannot hold (the caller maps that to a bad argument).
 */
export function encodeDbr(type: number, value: EncodableValue, extras?: EncodeExtras): { payload: Uint8Array; count: number } {
  const l = dbrLayout(type);
  if (!l) throw new RangeError(`unsupported DBR type ${type}`);
  const native = l.native;
  let count: number;
  let strings: Uint8Array[] | undefined;
  let chars: Uint8Array | undefined;
  if (native === 0) {
    const list =
      typeof value === 'string'
        ? [value]
        : typeof value === 'number' || typeof value === 'bigint'
          ? [String(value)]
          : (value as ArrayLike<unknown>);
    strings = [];
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      strings.push(encodeCString(typeof s === 'string' ? s : String(s), MAX_STRING_SIZE));
    }
    count = strings.length;
  } else if (native === 4 && typeof value === 'string') {
    chars = utf8.encode(value);
    count = chars.length + 1;
  } else if (typeof value === 'string') {
    throw new TypeError('a string cannot be encoded as a numeric DBR type');
  } else {
    count = typeof value === 'number' || typeof value === 'bigint' ? 1 : value.length;
  }
  if (l.form === DbrForm.PLAIN && native === 4 && isBytes(value)) {
    // Bytes put as bytes: a view of the caller's memory, copied once, into the message (which pads it).
    return { payload: new Uint8Array(value.buffer, value.byteOffset, value.length), count };
  }
  const size = l.valueOffset + count * l.elementSize;
  const payload = new Uint8Array(align8(Math.max(size, 1)));
  const view = new DataView(payload.buffer);
  if (l.form !== DbrForm.PLAIN) {
    view.setInt16(0, extras?.status ?? 0);
    view.setInt16(2, extras?.severity ?? 0);
    if (l.form === DbrForm.TIME) {
      view.setUint32(4, extras?.secondsPastEpoch ?? 0);
      view.setUint32(8, extras?.nanoseconds ?? 0);
    }
    if (l.form >= DbrForm.GR) writeMetadata(view, payload, native, l.form, extras?.metadata ?? {});
  }
  const off = l.valueOffset;
  if (strings) {
    strings.forEach((s, i) => payload.set(s, off + i * MAX_STRING_SIZE));
  } else if (chars) {
    payload.set(chars, off);
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    writeNumber(view, off, native, Number(value));
  } else if (native === 4 && isBytes(value)) {
    // Bytes into bytes: one copy (an Int8Array's bytes are its two's complement, as in C).
    payload.set(new Uint8Array(value.buffer, value.byteOffset, count), off);
  } else if (!copySwapped(payload, off, native, value, count)) {
    const arr = value as ArrayLike<number>;
    const es = ELEMENT_SIZE[native]!;
    const typed = ArrayBuffer.isView(arr); // a typed array holds numbers only
    for (let i = 0; i < count; i++) {
      const v = arr[i];
      if (!typed && typeof v !== 'number' && typeof v !== 'bigint') throw new TypeError(`element ${i} is not a number`);
      writeNumber(view, off + i * es, native, Number(v));
    }
  }
  return { payload, count };
}

/** The typed array of each native numeric type's own elements (SHORT, FLOAT, LONG, DOUBLE). */
type NativeArray = Int16Array | Float32Array | Int32Array | Float64Array;
const NATIVE_ARRAY: Record<number, new (n: number) => NativeArray> = { 1: Int16Array, 2: Float32Array, 5: Int32Array, 6: Float64Array };
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * An array of the native type's own elements (an Int32Array as DBR_LONG): its bytes copied at
 * once, then swapped to network order in place, instead of element by element. False for any
 * other value (the caller converts each element).
 */
function copySwapped(payload: Uint8Array, off: number, native: number, value: unknown, count: number): boolean {
  const kind = NATIVE_ARRAY[native];
  if (!kind || !(value instanceof kind)) return false;
  const t = value as NativeArray;
  const es = t.BYTES_PER_ELEMENT;
  payload.set(new Uint8Array(t.buffer, t.byteOffset, count * es), off);
  if (LITTLE_ENDIAN) {
    const b = Buffer.from(payload.buffer, payload.byteOffset + off, count * es);
    if (es === 2) b.swap16();
    else if (es === 4) b.swap32();
    else b.swap64();
  }
  return true;
}

function writeMetadata(view: DataView, bytes: Uint8Array, native: number, form: number, m: DbrMetadata): void {
  if (native === 0) return;
  if (native === 3) {
    const strs = (m.enumStrings ?? []).slice(0, MAX_ENUM_STATES);
    view.setInt16(4, strs.length);
    strs.forEach((s, i) => bytes.set(encodeCString(s, MAX_ENUM_STRING_SIZE), 6 + i * MAX_ENUM_STRING_SIZE));
    return;
  }
  let off = 4;
  if (native === 2 || native === 6) {
    view.setInt16(4, m.precision ?? 0);
    off = 8;
  }
  bytes.set(encodeCString(m.units ?? '', MAX_UNITS_SIZE), off);
  off += MAX_UNITS_SIZE;
  const size = ELEMENT_SIZE[native]!;
  const lims = [m.upperDisplayLimit, m.lowerDisplayLimit, m.upperAlarmLimit, m.upperWarningLimit, m.lowerWarningLimit, m.lowerAlarmLimit];
  if (form === DbrForm.CTRL) lims.push(m.upperControlLimit, m.lowerControlLimit);
  lims.forEach((v, i) => writeNumber(view, off + i * size, native, v ?? 0));
}
