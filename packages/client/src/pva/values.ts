// pvData values: serialization both ways for every type (64-bit integers as bigint, numeric
// arrays as typed arrays), default values, and bitset-selected (partial) structure (de)serialization.
import type { BitSet } from './bitset.js';
import { DecodeError, type Reader, type Writer } from './buffer.js';
import { PLAN_FIELDS, planKind, planOf } from './plans.js';
import {
  bitCount,
  decodeType,
  encodeType,
  fieldSpans,
  MAX_TYPE_DEPTH,
  type FieldDesc,
  type ScalarType,
  type StructureDesc,
  type TypeCache,
  type TypeRegistry,
  type UnionDesc,
} from './types.js';

export type NumericArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array;
export interface PvStructure {
  [field: string]: PvValue;
}
/** A union value: the selected member's name (null: nothing selected) and its value. */
export interface PvUnion {
  field: string | null;
  value: PvValue | null;
}
/** A variant union ("any") value: its own type (null: empty) and value. */
export interface PvAny {
  type: FieldDesc | null;
  value: PvValue | null;
}
/** Decoding gives typed arrays for numeric arrays; encoding also takes plain number[] / bigint[]. */
export type PvValue =
  | boolean
  | number
  | bigint
  | string
  | NumericArray
  | boolean[]
  | string[]
  | number[]
  | bigint[]
  | PvStructure
  | (PvStructure | null)[]
  | PvUnion
  | (PvUnion | null)[]
  | PvAny
  | (PvAny | null)[];

/** A value with its type, as variant unions, pvRequests and auth data travel. */
export interface Typed {
  type: FieldDesc;
  value: PvValue;
}

/** The constructor of a numeric typed array (`Float64Array`, `Int32Array`, ...). */
export type ArrayCtor = {
  new (n: number): NumericArray;
  new (b: ArrayBuffer, offset: number, n: number): NumericArray;
  BYTES_PER_ELEMENT: number;
};
const ARRAYS: Partial<Record<ScalarType, ArrayCtor>> = {
  byte: Int8Array,
  ubyte: Uint8Array,
  short: Int16Array,
  ushort: Uint16Array,
  int: Int32Array,
  uint: Uint32Array,
  long: BigInt64Array,
  ulong: BigUint64Array,
  float: Float32Array,
  double: Float64Array,
};
/** The typed array of a numeric scalar type (undefined for boolean and string). */
export function arrayOf(type: ScalarType): ArrayCtor | undefined {
  return ARRAYS[type];
}
const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Arrays from this size up, in a message's own buffer, in host byte order, are views of it. */
const VIEW_MIN_BYTES = 64 * 1024;

export function setField(obj: PvStructure, name: string, v: PvValue): void {
  if (name === '__proto__') Object.defineProperty(obj, name, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[name] = v;
}

/**
 * Fields one default value may hold in all. A peer's type can name one of its parts many times
 * by id (0xFE), so a short description can stand for more fields than memory holds.
 */
const MAX_DEFAULT_FIELDS = 1 << 20;
let defaultFieldsLeft = 0;

/**
 * The default value of a type, what a field holds until its sender marks it: 0, 0n, false, "",
 * empty arrays (a fixed array at its size), structures of defaults, unions with nothing selected.
 * Throws DecodeError for a type nested too deep or too large to build (a hostile peer's).
 */
export function defaultValue(desc: FieldDesc): PvValue {
  defaultFieldsLeft = MAX_DEFAULT_FIELDS;
  return defaultOf(desc, 0);
}

const shared = new WeakMap<FieldDesc, PvValue>();

/**
 * The default value of a type, made once per type object and shared: what decoding starts from
 * (a decoded value shares what its sender did not mark, and nothing changes it). 100,000
 * monitors of QSRV's NTScalar (one interned type) share one display, control and valueAlarm
 * that their updates never mark, rather than each holding its own.
 */
export function sharedDefault(desc: FieldDesc): PvValue {
  let v = shared.get(desc);
  if (v === undefined) {
    v = defaultValue(desc);
    shared.set(desc, v);
  }
  return v;
}

function defaultOf(desc: FieldDesc, depth: number): PvValue {
  if (depth > MAX_TYPE_DEPTH) throw new DecodeError('type nesting too deep');
  if (--defaultFieldsLeft < 0) throw new DecodeError(`type has more than ${MAX_DEFAULT_FIELDS} fields`);
  switch (desc.kind) {
    case 'scalar':
      if (desc.type === 'string') return '';
      if (desc.type === 'boolean') return false;
      return desc.type === 'long' || desc.type === 'ulong' ? 0n : 0;
    case 'scalarArray': {
      const C = ARRAYS[desc.type];
      // A fixed array starts at its size (kept small: a peer's type must not allocate gigabytes).
      const n = desc.array === 'fixed' ? Math.min(desc.size ?? 0, 4096) : 0;
      if (C) return new C(n);
      return desc.type === 'string' ? new Array<string>(n).fill('') : new Array<boolean>(n).fill(false);
    }
    case 'structure': {
      // Made with every key at once (JSON.parse sizes the object for them), so that the fields
      // sit in the object itself and its copies keep them there.
      const o = JSON.parse(`{${desc.fields.map((f) => `${JSON.stringify(f.name)}:null`).join(',')}}`) as PvStructure;
      for (const f of desc.fields) setField(o, f.name, defaultOf(f.type, depth + 1));
      return o;
    }
    case 'union':
      return { field: null, value: null };
    case 'any':
      return { type: null, value: null };
    default:
      return [];
  }
}

function readScalar(r: Reader, t: ScalarType): PvValue {
  switch (t) {
    case 'boolean':
      return r.bool();
    case 'byte':
      return r.i8();
    case 'ubyte':
      return r.u8();
    case 'short':
      return r.i16();
    case 'ushort':
      return r.u16();
    case 'int':
      return r.i32();
    case 'uint':
      return r.u32();
    case 'long':
      return r.i64();
    case 'ulong':
      return r.u64();
    case 'float':
      return r.f32();
    case 'double':
      return r.f64();
    case 'string':
      return r.string();
  }
}

function readArray(r: Reader, t: ScalarType, n: number): PvValue {
  const C = ARRAYS[t];
  if (!C) {
    if (n > r.remaining) throw new DecodeError(`${n} elements cannot fit in ${r.remaining} bytes`);
    if (t === 'boolean') {
      const out: boolean[] = [];
      for (let i = 0; i < n; i++) out.push(r.bool());
      return out;
    }
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(r.string());
    return out;
  }
  const size = C.BYTES_PER_ELEMENT;
  r.need(n * size);
  const own = r.owned;
  if (own && n * size >= VIEW_MIN_BYTES && (size === 1 || r.littleEndian === HOST_LE)) {
    const at = r.bytes.byteOffset + r.pos;
    const off = at % size;
    // Misaligned: have the next large message start where this array aligns.
    if (off) own.shift = (own.shift + 8 - (at % 8)) % 8;
    // This time the elements move back onto the bytes just read (the size before them): no new
    // memory (unless that would overwrite an earlier array's view, or the payload's start).
    if (off === 0 || (r.pos >= off && at - off >= r.viewEnd)) {
      const bytes = n * size;
      if (off) new Uint8Array(r.bytes.buffer, at - off, bytes + off).copyWithin(0, off);
      r.pos += bytes;
      r.viewEnd = at - off + bytes;
      return new C(r.bytes.buffer as ArrayBuffer, at - off, n);
    }
  }
  const out = new C(n);
  const src = r.bytes.subarray(r.pos, r.pos + n * size);
  const dst = new Uint8Array(out.buffer);
  if (size === 1 || r.littleEndian === HOST_LE) dst.set(src);
  else for (let i = 0; i < n * size; i += size) for (let j = 0; j < size; j++) dst[i + j] = src[i + size - 1 - j]!;
  r.pos += n * size;
  return out;
}

/** Read a value of type `desc`. Throws DecodeError on malformed input. */
export function decodeValue(r: Reader, desc: FieldDesc, cache: TypeCache | undefined, depth = 0): PvValue {
  if (depth > MAX_TYPE_DEPTH) throw new DecodeError('value nesting too deep');
  switch (desc.kind) {
    case 'scalar':
      return readScalar(r, desc.type);
    case 'scalarArray': {
      const n = desc.array === 'fixed' ? (desc.size ?? 0) : r.count();
      return readArray(r, desc.type, n);
    }
    case 'structure': {
      // A copy of the type's default has every field in place (in the object itself, not in a
      // property array added field by field): what decodeUpdate's copies of it keep too.
      const o = copierOf(desc)(sharedDefault(desc) as PvStructure);
      for (const f of desc.fields) setField(o, f.name, decodeValue(r, f.type, cache, depth + 1));
      return o;
    }
    case 'union':
      return decodeUnion(r, desc, cache, depth);
    case 'any':
      return decodeAny(r, cache, depth);
    case 'structureArray':
    case 'unionArray':
    case 'anyArray': {
      const n = r.count();
      if (n > r.remaining) throw new DecodeError(`${n} elements cannot fit in ${r.remaining} bytes`);
      const out: (PvValue | null)[] = [];
      for (let i = 0; i < n; i++) {
        if (!r.bool()) {
          out.push(null);
          continue;
        }
        if (desc.kind === 'structureArray') out.push(decodeValue(r, desc.element, cache, depth + 1));
        else if (desc.kind === 'unionArray') out.push(decodeUnion(r, desc.element, cache, depth + 1));
        else out.push(decodeAny(r, cache, depth + 1));
      }
      return out as PvValue;
    }
  }
}

function decodeUnion(r: Reader, desc: UnionDesc, cache: TypeCache | undefined, depth: number): PvUnion {
  const sel = r.size();
  if (sel < 0) return { field: null, value: null };
  const m = desc.fields[sel];
  if (!m) throw new DecodeError(`union selector ${sel} out of range (${desc.fields.length} members)`);
  return { field: m.name, value: decodeValue(r, m.type, cache, depth + 1) };
}

function decodeAny(r: Reader, cache: TypeCache | undefined, depth: number): PvAny {
  const type = decodeType(r, cache, depth + 1);
  if (!type) return { type: null, value: null };
  return { type, value: decodeValue(r, type, cache, depth + 1) };
}

function bad(desc: FieldDesc, v: unknown): never {
  throw new TypeError(`value ${String(v)} does not fit type ${desc.kind}${'type' in desc ? ' ' + desc.type : ''}`);
}

const num = (desc: FieldDesc, v: PvValue): number =>
  typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'boolean' ? +v : bad(desc, v);
const big = (desc: FieldDesc, v: PvValue): bigint =>
  typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : bad(desc, v);

function writeScalar(w: Writer, desc: FieldDesc, t: ScalarType, v: PvValue): void {
  switch (t) {
    case 'boolean':
      w.bool(Boolean(v));
      return;
    case 'byte':
    case 'ubyte':
      w.u8(num(desc, v));
      return;
    case 'short':
    case 'ushort':
      w.u16(num(desc, v));
      return;
    case 'int':
    case 'uint':
      w.u32(num(desc, v));
      return;
    case 'long':
      w.i64(big(desc, v));
      return;
    case 'ulong':
      w.u64(big(desc, v));
      return;
    case 'float':
      w.f32(num(desc, v));
      return;
    case 'double':
      w.f64(num(desc, v));
      return;
    case 'string':
      w.string(typeof v === 'string' ? v : String(v));
      return;
  }
}

function isArrayLike(v: PvValue): v is NumericArray | boolean[] | string[] | number[] | bigint[] {
  return Array.isArray(v) || ArrayBuffer.isView(v);
}

/**
 * Write a value of type `desc`. Programming errors (a value that does not fit the type) throw
 * TypeError; plain arrays are accepted where typed arrays are expected.
 */
export function encodeValue(w: Writer, desc: FieldDesc, v: PvValue, registry?: TypeRegistry): void {
  switch (desc.kind) {
    case 'scalar':
      writeScalar(w, desc, desc.type, v);
      return;
    case 'scalarArray': {
      if (!isArrayLike(v)) bad(desc, v);
      const arr = v as ArrayLike<PvValue>;
      if (desc.array !== 'fixed') w.size(arr.length);
      else if (arr.length !== desc.size) throw new TypeError(`fixed array needs ${desc.size} elements, got ${arr.length}`);
      const C = ARRAYS[desc.type];
      // Bytes are copied as they are, whichever byte type holds them (an Int8Array as ubyte: its two's complement, as C does).
      const bytes = C?.BYTES_PER_ELEMENT === 1 && (v instanceof Int8Array || v instanceof Uint8Array);
      if (C && (bytes || v instanceof C) && (C.BYTES_PER_ELEMENT === 1 || w.littleEndian === HOST_LE)) {
        w.raw(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
        return;
      }
      for (let i = 0; i < arr.length; i++) writeScalar(w, desc, desc.type, arr[i]!);
      return;
    }
    case 'structure': {
      if (typeof v !== 'object' || v === null || isArrayLike(v)) bad(desc, v);
      const o = v as PvStructure;
      for (const f of desc.fields) encodeValue(w, f.type, o[f.name] ?? sharedDefault(f.type), registry);
      return;
    }
    case 'union':
      encodeUnion(w, desc, v as PvUnion);
      return;
    case 'any':
      encodeAny(w, v as PvAny, registry);
      return;
    case 'structureArray':
    case 'unionArray':
    case 'anyArray': {
      if (!Array.isArray(v)) bad(desc, v);
      w.size(v.length);
      for (const el of v as (PvValue | null)[]) {
        w.bool(el !== null);
        if (el === null) continue;
        if (desc.kind === 'structureArray') encodeValue(w, desc.element, el, registry);
        else if (desc.kind === 'unionArray') encodeUnion(w, desc.element, el as PvUnion);
        else encodeAny(w, el as PvAny, registry);
      }
    }
  }
}

function encodeUnion(w: Writer, desc: UnionDesc, v: PvUnion): void {
  if (!v || v.field === null) {
    w.size(-1);
    return;
  }
  const i = desc.fields.findIndex((f) => f.name === v.field);
  if (i < 0) throw new TypeError(`union has no member ${v.field}`);
  w.size(i);
  encodeValue(w, desc.fields[i]!.type, v.value ?? sharedDefault(desc.fields[i]!.type));
}

function encodeAny(w: Writer, v: PvAny, registry?: TypeRegistry): void {
  if (!v?.type) {
    encodeType(w, null);
    return;
  }
  encodeType(w, v.type, registry);
  encodeValue(w, v.type, v.value ?? sharedDefault(v.type), registry);
}

/** Write the fields `bits` selects from `value` (the counterpart of decodePartial). */
export function encodePartial(w: Writer, desc: StructureDesc, value: PvStructure, bits: BitSet, registry?: TypeRegistry): void {
  const plan = planOf(encodePlans, desc, bits);
  if (plan) plan(w, value, registry);
  else if (bits.get(0)) encodeValue(w, desc, value, registry);
  else partialOut(w, desc, value, bits, 0, registry);
}

type EncodePlan = (w: Writer, value: PvStructure, registry: TypeRegistry | undefined) => void;

/** The code that writes scalar `x` of type `t` (code naming the type's FieldDesc), as writeScalar does. */
const SCALAR_WRITES: Record<ScalarType, (x: string, t: string) => string> = {
  boolean: (x) => `w.bool(Boolean(${x}))`,
  byte: (x, t) => `w.u8(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  ubyte: (x, t) => `w.u8(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  short: (x, t) => `w.u16(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  ushort: (x, t) => `w.u16(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  int: (x, t) => `w.u32(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  uint: (x, t) => `w.u32(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  long: (x, t) => `w.i64(typeof ${x} === "bigint" ? ${x} : big(${t}, ${x}))`,
  ulong: (x, t) => `w.u64(typeof ${x} === "bigint" ? ${x} : big(${t}, ${x}))`,
  float: (x, t) => `w.f32(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  double: (x, t) => `w.f64(typeof ${x} === "number" ? ${x} : num(${t}, ${x}))`,
  string: (x) => `w.string(typeof ${x} === "string" ? ${x} : String(${x}))`,
};

/**
 * A compiled encoder for one type and one set of marked fields (see plans.ts): the fields `bits`
 * selects, written in order as encodeValue and partialOut write them, with the same checks; a
 * server writes the same set (value, alarm, timeStamp) for every post.
 */
function compileEncoder(desc: StructureDesc, bits: BitSet): EncodePlan | null {
  if (bitCount(desc) > PLAN_FIELDS) return null;
  const consts: unknown[] = [];
  const ref = (c: unknown): string => `c[${consts.push(c) - 1}]`;
  let n = 0;
  const lines: string[] = [];
  // A field's value in `x`, or its default.
  const read = (parent: string, f: { name: string; type: FieldDesc }): string => {
    const x = `v${n++}`;
    lines.push(`const ${x} = ${parent}[${JSON.stringify(f.name)}] ?? ${ref(sharedDefault(f.type))};`);
    return x;
  };
  const whole = (t: FieldDesc, x: string): void => {
    if (t.kind === 'scalar') lines.push(`${SCALAR_WRITES[t.type](x, ref(t))};`);
    else if (t.kind === 'structure') {
      lines.push(`if (typeof ${x} !== "object" || ${x} === null || Array.isArray(${x}) || ArrayBuffer.isView(${x})) bad(${ref(t)}, ${x});`);
      for (const f of t.fields) whole(f.type, read(x, f));
    } else lines.push(`encodeValue(w, ${ref(t)}, ${x}, registry);`);
  };
  const part = (t: StructureDesc, x: string, base: number): void => {
    const spans = fieldSpans(t);
    let off = base + 1;
    t.fields.forEach((f, i) => {
      const span = spans[i]!;
      if (bits.get(off)) whole(f.type, read(x, f));
      else if (span > 1 && bits.anyIn(off + 1, off + span)) part(f.type as StructureDesc, read(x, f), off);
      off += span;
    });
  };
  if (bits.get(0)) whole(desc, 'value');
  else part(desc, 'value', 0);
  try {
    return new Function('c', 'num', 'big', 'bad', 'encodeValue', `return (w, value, registry) => {\n${lines.join('\n')}\n};`)(
      consts,
      num,
      big,
      bad,
      encodeValue,
    ) as EncodePlan;
  } catch {
    return null; // code generation from strings disallowed here
  }
}

const encodePlans = planKind(compileEncoder);

function partialOut(w: Writer, desc: StructureDesc, value: PvStructure, bits: BitSet, base: number, registry?: TypeRegistry): void {
  const spans = fieldSpans(desc);
  let off = base + 1;
  const fields = desc.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const span = spans[i]!;
    if (bits.get(off)) encodeValue(w, f.type, value[f.name] ?? sharedDefault(f.type), registry);
    else if (span > 1 && bits.anyIn(off + 1, off + span))
      partialOut(w, f.type as StructureDesc, (value[f.name] ?? sharedDefault(f.type)) as PvStructure, bits, off, registry);
    off += span;
  }
}

/** Copies a structure: a new object with the same fields (see {@link copierOf}). */
export type Copier = (p: PvStructure) => PvStructure;
/** The copiers made, by the key they add (none: undefined) and the type. */
const copiers = new Map<symbol | undefined, WeakMap<StructureDesc, Copier>>();

/**
 * A function that copies a structure of `desc` (its fields, not what they hold), made once per
 * type: an object literal of the type's field names where code can be generated (the literal is
 * several times faster than a spread, and its fields sit in the object), else a spread. With
 * `mark`, each copy also has that key, set to 0 (in the literal: in the object too).
 */
export function copierOf(desc: StructureDesc, mark?: symbol): Copier {
  let byType = copiers.get(mark);
  if (!byType) copiers.set(mark, (byType = new WeakMap()));
  let c = byType.get(desc);
  if (!c) {
    c = makeCopier(
      desc.fields.map((f) => f.name),
      mark,
    );
    byType.set(desc, c);
  }
  return c;
}

function makeCopier(names: string[], mark: symbol | undefined): Copier {
  // Without a literal: the fields by name (a spread would copy symbol keys too).
  const spread: Copier = (p) => {
    const o: PvStructure = {};
    for (const k of Object.keys(p)) setField(o, k, p[k]!);
    if (mark) (o as Record<symbol, number>)[mark] = 0;
    return o;
  };
  // A literal's "__proto__" key would set the prototype, and a repeated name would differ from the copy by name.
  if (names.length > 64 || names.includes('__proto__') || new Set(names).size !== names.length) return spread;
  const fields = names.map((n) => JSON.stringify(n)).map((k) => `${k}: p[${k}]`);
  if (mark) fields.push('[mark]: 0');
  try {
    return new Function('mark', `return (p) => ({${fields.join(', ')}});`)(mark) as Copier;
  } catch {
    return spread; // code generation from strings disallowed here
  }
}

export const isStruct = (v: PvValue | undefined): v is PvStructure =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
