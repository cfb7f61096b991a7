// DBR payload layouts: the 7 native types in plain/STS/TIME/GR/CTRL forms, decoding to JS
// values (typed arrays for numeric arrays, strings, enum state strings) and the Reading type.
import {
  DbrForm,
  EPICS_EPOCH_OFFSET,
  FORM_NAMES,
  type FormName,
  MAX_ENUM_STATES,
  MAX_ENUM_STRING_SIZE,
  MAX_STRING_SIZE,
  MAX_UNITS_SIZE,
  type DbrFormId,
  type NativeType,
} from './constants.js';
import { byteSwap } from './swap.js';

/** Bytes per element of each native type. */
export const ELEMENT_SIZE: readonly number[] = [MAX_STRING_SIZE, 2, 4, 2, 1, 4, 8];

/** Offset of the value inside the payload, by form then native type. */
const VALUE_OFFSET: readonly (readonly number[])[] = [
  [0, 0, 0, 0, 0, 0, 0], // plain
  [4, 4, 4, 4, 5, 4, 8], // STS
  [12, 14, 12, 14, 15, 12, 16], // TIME
  [4, 24, 40, 422, 19, 36, 64], // GR (GR_STRING is STS_STRING)
  [4, 28, 48, 422, 21, 44, 80], // CTRL
];

export interface DbrLayout {
  native: NativeType;
  form: DbrFormId;
  valueOffset: number;
  elementSize: number;
}

const LAYOUTS: DbrLayout[] = [];
for (let form = 0; form < 5; form++) {
  for (let native = 0; native < 7; native++) {
    LAYOUTS.push({
      native: native as NativeType,
      form: form as DbrFormId,
      valueOffset: VALUE_OFFSET[form]![native]!,
      elementSize: ELEMENT_SIZE[native]!,
    });
  }
}

/** Layout of a DBR type id 0..34, or undefined for other ids. */
export function dbrLayout(type: number): DbrLayout | undefined {
  return LAYOUTS[type];
}

export function dbrTypeOf(native: NativeType, form: DbrFormId): number {
  return form * 7 + native;
}

/** Unpadded payload bytes for `count` elements of this DBR type (throws on an unknown type). */
export function dbrPayloadSize(type: number, count: number): number {
  const l = LAYOUTS[type];
  if (!l) throw new RangeError(`unsupported DBR type ${type}`);
  return l.valueOffset + count * l.elementSize;
}

/** Display, alarm and control limits, units, precision and enum states of GR/CTRL forms. */
export interface DbrMetadata {
  units?: string;
  precision?: number;
  enumStrings?: string[];
  upperDisplayLimit?: number;
  lowerDisplayLimit?: number;
  upperAlarmLimit?: number;
  upperWarningLimit?: number;
  lowerWarningLimit?: number;
  lowerAlarmLimit?: number;
  upperControlLimit?: number;
  lowerControlLimit?: number;
}

export type CaArray = Int16Array | Float32Array | Uint16Array | Uint8Array | Int32Array | Float64Array;
export type CaValue = number | string | string[] | CaArray;

/** The DBR form of a type id (0..34): plain, sts, time, gr or ctrl. */
export function formNameOf(dbrType: number): FormName {
  return FORM_NAMES[(dbrType / 7) | 0] ?? 'plain';
}

/**
 * One decoded DBR payload. Only what its form carries is there: alarm status and severity from
 * STS up (undefined in the plain form), a timestamp only in the TIME form (undefined otherwise;
 * CA's GR and CTRL forms carry none), metadata only in GR and CTRL. The JS Date is made when
 * `timestamp` is read. The client's public types narrow this per form (see client/ca/reading.ts).
 */
export class Reading {
  readonly kind = 'update' as const;
  /** Alarm status (menuAlarmStat index); undefined in the plain form. */
  readonly status: number | undefined;
  /** Alarm severity (0 NO_ALARM, 1 MINOR, 2 MAJOR, 3 INVALID); undefined in the plain form. */
  readonly severity: number | undefined;
  /** Seconds past the EPICS epoch (1990-01-01 UTC); undefined unless a TIME form. */
  readonly secondsPastEpoch: number | undefined;
  /** Nanoseconds of the timestamp; undefined unless a TIME form. */
  readonly nanoseconds: number | undefined;

  constructor(
    /** The value: a number or string for scalars, a typed array or string[] for arrays. */
    readonly value: CaValue,
    /** The DBR type id it arrived as. */
    readonly dbrType: number,
    /** Element count as sent by the server. */
    readonly count: number,
    status: number | undefined,
    severity: number | undefined,
    secondsPastEpoch: number | undefined,
    nanoseconds: number | undefined,
    /** Units, limits, precision, enum strings: only for GR/CTRL forms (or a merged 'full' read). */
    readonly metadata: DbrMetadata | undefined,
  ) {
    const form = (dbrType / 7) | 0;
    const timed = form === DbrForm.TIME;
    this.status = form === DbrForm.PLAIN ? undefined : status;
    this.severity = form === DbrForm.PLAIN ? undefined : severity;
    this.secondsPastEpoch = timed ? secondsPastEpoch : undefined;
    this.nanoseconds = timed ? nanoseconds : undefined;
  }

  /** The DBR form it arrived in. */
  get form(): FormName {
    return formNameOf(this.dbrType);
  }

  /** The timestamp as a Date (millisecond precision; see secondsPastEpoch/nanoseconds for full); TIME forms only. */
  get timestamp(): Date | undefined {
    const s = this.secondsPastEpoch;
    if (s === undefined) return undefined;
    return new Date((s + EPICS_EPOCH_OFFSET) * 1000 + Math.floor(this.nanoseconds! / 1e6));
  }

  /** The timestamp as POSIX seconds (a float); TIME forms only. */
  get posixSeconds(): number | undefined {
    const s = this.secondsPastEpoch;
    if (s === undefined) return undefined;
    return s + EPICS_EPOCH_OFFSET + this.nanoseconds! / 1e9;
  }
}

export interface DecodeOptions {
  /** Return an array even for one element (the channel is an array). */
  asArray?: boolean;
  /** Decode a CHAR array as a string (up to the first NUL). */
  longString?: boolean;
  /** The payload is owned by the caller for good: arrays may view it in place (after swapping). */
  owned?: boolean;
  /** The array elements are already in host byte order (the framer swapped them on arrival). */
  hostOrder?: boolean;
}

/**
 * Builds the object a decoded payload becomes: a Reading, or a subclass that carries more (a
 * caller that keeps its own result objects decodes straight into them, one object per payload).
 */
export interface ReadingFactory<R extends Reading = Reading> {
  makeReading(
    value: CaValue,
    dbrType: number,
    count: number,
    status: number,
    severity: number,
    secondsPastEpoch: number,
    nanoseconds: number,
    metadata: DbrMetadata | undefined,
  ): R;
}

/** The default factory: plain Readings. */
const plainReadings: ReadingFactory = {
  makeReading: (value, dbrType, count, status, severity, secs, nsec, meta) =>
    new Reading(value, dbrType, count, status, severity, secs, nsec, meta),
};

/** DecodeOptions as bits, for hot paths (no options object per payload). */
export const DECODE_AS_ARRAY = 1;
export const DECODE_LONG_STRING = 2;
export const DECODE_OWNED = 4;
export const DECODE_HOST_ORDER = 8;

function flagsOf(o: DecodeOptions | undefined): number {
  if (!o) return 0;
  return (
    (o.asArray ? DECODE_AS_ARRAY : 0) |
    (o.longString ? DECODE_LONG_STRING : 0) |
    (o.owned ? DECODE_OWNED : 0) |
    (o.hostOrder ? DECODE_HOST_ORDER : 0)
  );
}

const utf8 = new TextDecoder('utf-8');

/** Decode a NUL-terminated string from at most `max` bytes. */
export function readCString(bytes: Uint8Array, offset: number, max: number): string {
  const end = Math.min(offset + max, bytes.length);
  let i = offset;
  let ascii = true;
  while (i < end && bytes[i] !== 0) {
    if (bytes[i]! > 127) ascii = false;
    i++;
  }
  if (i === offset) return '';
  if (ascii && i - offset < 64) return String.fromCharCode.apply(null, bytes.subarray(offset, i) as unknown as number[]);
  return utf8.decode(bytes.subarray(offset, i));
}

function readNumber(view: DataView, off: number, native: number): number {
  switch (native) {
    case 1:
      return view.getInt16(off);
    case 2:
      return view.getFloat32(off);
    case 3:
      return view.getUint16(off);
    case 4:
      return view.getUint8(off);
    case 5:
      return view.getInt32(off);
    default:
      return view.getFloat64(off);
  }
}

function readMetadata(view: DataView, bytes: Uint8Array, native: number, form: number): DbrMetadata {
  const meta: DbrMetadata = {};
  if (native === 0) return meta;
  if (native === 3) {
    const n = Math.min(view.getInt16(4), MAX_ENUM_STATES);
    const strs: string[] = [];
    for (let i = 0; i < n; i++) strs.push(readCString(bytes, 6 + i * MAX_ENUM_STRING_SIZE, MAX_ENUM_STRING_SIZE));
    meta.enumStrings = strs;
    return meta;
  }
  let off = 4;
  if (native === 2 || native === 6) {
    meta.precision = view.getInt16(4);
    off = 8;
  }
  meta.units = readCString(bytes, off, MAX_UNITS_SIZE);
  off += MAX_UNITS_SIZE;
  const size = ELEMENT_SIZE[native]!;
  const lim = (i: number): number => readNumber(view, off + i * size, native);
  meta.upperDisplayLimit = lim(0);
  meta.lowerDisplayLimit = lim(1);
  meta.upperAlarmLimit = lim(2);
  meta.upperWarningLimit = lim(3);
  meta.lowerWarningLimit = lim(4);
  meta.lowerAlarmLimit = lim(5);
  if (form === DbrForm.CTRL) {
    meta.upperControlLimit = lim(6);
    meta.lowerControlLimit = lim(7);
  }
  return meta;
}

/** Make a native-endian typed array of `count` elements from big-endian bytes at `off`. */
function readArray(bytes: Uint8Array, off: number, native: number, count: number, owned: boolean, hostOrder: boolean): CaArray {
  const size = ELEMENT_SIZE[native]!;
  const nbytes = count * size;
  let src: Uint8Array;
  const abs = bytes.byteOffset + off;
  if (owned && abs % size === 0) {
    src = bytes.subarray(off, off + nbytes); // zero-copy: swap in place and view
  } else {
    src = bytes.slice(off, off + nbytes); // fresh, aligned at 0
  }
  if (size > 1 && !hostOrder) byteSwap(src, size);
  const buf = src.buffer;
  const o = src.byteOffset;
  switch (native) {
    case 1:
      return new Int16Array(buf, o, count);
    case 2:
      return new Float32Array(buf, o, count);
    case 3:
      return new Uint16Array(buf, o, count);
    case 4:
      return src;
    case 5:
      return new Int32Array(buf, o, count);
    default:
      return new Float64Array(buf, o, count);
  }
}

/**
 * Decode a DBR payload (big-endian) of `count` elements into a Reading; the options as an object
 * or as DECODE_* bits; `factory` builds the result (plain Readings unless given). Returns undefined
 * when the type is unknown or the payload is too short for the count (a protocol error for the caller).
 */
export function decodeDbr<R extends Reading = Reading>(
  type: number,
  count: number,
  payload: Uint8Array,
  options: DecodeOptions | number = 0,
  factory: ReadingFactory<R> = plainReadings as ReadingFactory<R>,
  /** Where the DBR starts in `payload`, and its length (default: all of `payload`). */
  base = 0,
  length = payload.length - base,
): R | undefined {
  const flags = typeof options === 'number' ? options : flagsOf(options);
  const l = LAYOUTS[type];
  if (!l) return undefined;
  const native = l.native;
  const off = base + l.valueOffset;
  if (length < l.valueOffset + count * l.elementSize) return undefined;
  const form = l.form;
  let status = 0,
    severity = 0,
    secs = 0,
    nsec = 0;
  if (form !== DbrForm.PLAIN) {
    const b = base;
    status = ((payload[b]! << 24) >> 16) | payload[b + 1]!;
    severity = ((payload[b + 2]! << 24) >> 16) | payload[b + 3]!;
    if (form === DbrForm.TIME) {
      secs = ((payload[b + 4]! << 24) | (payload[b + 5]! << 16) | (payload[b + 6]! << 8) | payload[b + 7]!) >>> 0;
      nsec = ((payload[b + 8]! << 24) | (payload[b + 9]! << 16) | (payload[b + 10]! << 8) | payload[b + 11]!) >>> 0;
    }
  }
  const asArray = (flags & DECODE_AS_ARRAY) !== 0;
  let value: CaValue;
  if (native === 0) {
    if (count === 1 && !asArray) value = readCString(payload, off, MAX_STRING_SIZE);
    else {
      const arr: string[] = [];
      for (let i = 0; i < count; i++) arr.push(readCString(payload, off + i * MAX_STRING_SIZE, MAX_STRING_SIZE));
      value = arr;
    }
  } else if (native === 4 && (flags & DECODE_LONG_STRING) !== 0) {
    value = readCString(payload, off, count);
  } else if (count === 1 && !asArray) {
    value = readScalar(payload, off, native);
  } else {
    value = readArray(payload, off, native, count, (flags & DECODE_OWNED) !== 0, (flags & DECODE_HOST_ORDER) !== 0);
  }
  let meta: DbrMetadata | undefined;
  if (form >= DbrForm.GR) {
    const dbr = payload.subarray(base, base + length);
    meta = readMetadata(new DataView(dbr.buffer, dbr.byteOffset, dbr.length), dbr, native, form);
  }
  return factory.makeReading(value, type, count, status, severity, secs, nsec, meta);
}

const scratch = new DataView(new ArrayBuffer(8));

/** One big-endian number of a native type at `off`, without a DataView over the payload. */
function readScalar(b: Uint8Array, off: number, native: number): number {
  switch (native) {
    case 1:
      return ((b[off]! << 24) >> 16) | b[off + 1]!;
    case 3:
      return (b[off]! << 8) | b[off + 1]!;
    case 4:
      return b[off]!;
    case 5:
      return (b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!;
    case 2:
      scratch.setUint32(0, ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0);
      return scratch.getFloat32(0);
    default:
      scratch.setUint32(0, ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0);
      scratch.setUint32(4, ((b[off + 4]! << 24) | (b[off + 5]! << 16) | (b[off + 6]! << 8) | b[off + 7]!) >>> 0);
      return scratch.getFloat64(0);
  }
}
