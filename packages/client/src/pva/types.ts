// pvData introspection: type descriptions (scalars, arrays, structures, unions, any), their
// wire form, and the per-connection introspection caches (0xFD define, 0xFE reference, 0xFF null).
import { DecodeError, type Reader, type Writer } from './buffer.js';
import { TypeCode } from './constants.js';

export type ScalarType =
  | 'boolean'
  | 'byte'
  | 'short'
  | 'int'
  | 'long'
  | 'ubyte'
  | 'ushort'
  | 'uint'
  | 'ulong'
  | 'float'
  | 'double'
  | 'string';

export interface ScalarDesc {
  kind: 'scalar';
  type: ScalarType /** Bounded string: its bound. */;
  bound?: number;
}
export interface ScalarArrayDesc {
  kind: 'scalarArray';
  type: ScalarType;
  array: 'variable' | 'bounded' | 'fixed';
  /** Bound (bounded arrays) or element count (fixed arrays). */
  size?: number;
}
export interface FieldEntry {
  name: string;
  type: FieldDesc;
}
export interface StructureDesc {
  kind: 'structure';
  id: string;
  fields: FieldEntry[];
}
export interface UnionDesc {
  kind: 'union';
  id: string;
  fields: FieldEntry[];
}
export interface StructureArrayDesc {
  kind: 'structureArray';
  element: StructureDesc;
}
export interface UnionArrayDesc {
  kind: 'unionArray';
  element: UnionDesc;
}
/** The variant union ("any"): each value carries its own type. */
export interface AnyDesc {
  kind: 'any';
}
export interface AnyArrayDesc {
  kind: 'anyArray';
}

export type FieldDesc =
  | ScalarDesc
  | ScalarArrayDesc
  | StructureDesc
  | UnionDesc
  | StructureArrayDesc
  | UnionArrayDesc
  | AnyDesc
  | AnyArrayDesc;

const SCALAR_CODES: Record<ScalarType, number> = {
  boolean: 0x00,
  byte: 0x20,
  short: 0x21,
  int: 0x22,
  long: 0x23,
  ubyte: 0x24,
  ushort: 0x25,
  uint: 0x26,
  ulong: 0x27,
  float: 0x42,
  double: 0x43,
  string: 0x60,
};
const SCALAR_BY_CODE = new Map<number, ScalarType>(Object.entries(SCALAR_CODES).map(([k, v]) => [v, k as ScalarType]));
const ARRAY_BITS = { variable: 0x08, bounded: 0x10, fixed: 0x18 } as const;

/** Deepest nesting accepted when decoding (a hostile peer cannot exhaust the stack). */
export const MAX_TYPE_DEPTH = 64;

// Builders.
export const scalar = (type: ScalarType): ScalarDesc => ({ kind: 'scalar', type });
export const boundedString = (bound: number): ScalarDesc => ({ kind: 'scalar', type: 'string', bound });
export const scalarArray = (type: ScalarType, array: ScalarArrayDesc['array'] = 'variable', size?: number): ScalarArrayDesc =>
  size === undefined ? { kind: 'scalarArray', type, array } : { kind: 'scalarArray', type, array, size };
const entries = (fields: Record<string, FieldDesc>): FieldEntry[] => Object.entries(fields).map(([name, type]) => ({ name, type }));
export const structure = (id: string, fields: Record<string, FieldDesc>): StructureDesc => ({
  kind: 'structure',
  id,
  fields: entries(fields),
});
export const union = (id: string, fields: Record<string, FieldDesc>): UnionDesc => ({ kind: 'union', id, fields: entries(fields) });
export const structureArray = (element: StructureDesc): StructureArrayDesc => ({ kind: 'structureArray', element });
export const unionArray = (element: UnionDesc): UnionArrayDesc => ({ kind: 'unionArray', element });
export const any = (): AnyDesc => ({ kind: 'any' });
export const anyArray = (): AnyArrayDesc => ({ kind: 'anyArray' });

/** The member of a structure or union with this name. */
export function fieldOf(desc: StructureDesc | UnionDesc, name: string): FieldDesc | undefined {
  for (const f of desc.fields) if (f.name === name) return f.type;
  return undefined;
}

/** Types the peer defined on this connection (0xFD), looked up by later references (0xFE). */
export class TypeCache {
  readonly entries = new Map<number, FieldDesc>();
  clear(): void {
    this.entries.clear();
  }
}

/** Sender side: assigns ids to types sent before, so repeats go out as 0xFE + id. */
export class TypeRegistry {
  private readonly ids = new Map<FieldDesc, number>();
  private next = 1;
  constructor(readonly maxSize = 0x7fff) {}
  /** [id, isNew], or undefined when the registry is full (then send the type in full). */
  idFor(desc: FieldDesc): [number, boolean] | undefined {
    const id = this.ids.get(desc);
    if (id !== undefined) return [id, false];
    if (this.ids.size >= this.maxSize) return undefined;
    const nid = this.next++;
    this.ids.set(desc, nid);
    return [nid, true];
  }
}

/** Read an introspection description: a type, or null for 0xFF. Throws DecodeError. */
export function decodeType(r: Reader, cache: TypeCache | undefined, depth = 0): FieldDesc | null {
  if (depth > MAX_TYPE_DEPTH) throw new DecodeError('type nesting too deep');
  const code = r.u8();
  switch (code) {
    case TypeCode.NULL:
      return null;
    case TypeCode.ONLY_ID: {
      const id = r.u16();
      const t = cache?.entries.get(id);
      if (!t) throw new DecodeError(`reference to unknown type id ${id}`);
      return t;
    }
    case TypeCode.FULL_WITH_ID:
    case TypeCode.FULL_TAGGED_ID: {
      const id = r.u16();
      if (code === TypeCode.FULL_TAGGED_ID) r.i32();
      const t = decodeType(r, cache, depth + 1);
      if (!t) throw new DecodeError(`type id ${id} defined as null`);
      cache?.entries.set(id, t);
      return t;
    }
  }
  return decodeFieldDesc(r, code, cache, depth);
}

function decodeFields(r: Reader, cache: TypeCache | undefined, depth: number): FieldEntry[] {
  const n = r.count();
  if (n * 2 > r.remaining) throw new DecodeError(`${n} fields cannot fit in ${r.remaining} bytes`);
  const fields: FieldEntry[] = [];
  for (let i = 0; i < n; i++) {
    const name = r.string();
    const type = decodeType(r, cache, depth + 1);
    if (!type) throw new DecodeError(`field ${name} has the null type`);
    fields.push({ name, type });
  }
  return fields;
}

function decodeFieldDesc(r: Reader, code: number, cache: TypeCache | undefined, depth: number): FieldDesc {
  const arrayBits = code & 0x18;
  if ((code & 0xe0) === 0x80) {
    const low = code & 0x07;
    if (arrayBits === 0x00) {
      if (low === 0) return { kind: 'structure', id: r.string(), fields: decodeFields(r, cache, depth) };
      if (low === 1) return { kind: 'union', id: r.string(), fields: decodeFields(r, cache, depth) };
      if (low === 2) return { kind: 'any' };
      if (low === 3 || low === 6) return { kind: 'scalar', type: 'string', bound: r.count() };
    } else if (arrayBits === 0x08) {
      if (low === 0 || low === 1) {
        const el = decodeType(r, cache, depth + 1);
        if (low === 0 && el?.kind === 'structure') return { kind: 'structureArray', element: el };
        if (low === 1 && el?.kind === 'union') return { kind: 'unionArray', element: el };
        throw new DecodeError(`array element of code 0x${code.toString(16)} is not a ${low ? 'union' : 'structure'}`);
      }
      if (low === 2) return { kind: 'anyArray' };
    }
    throw new DecodeError(`unsupported type code 0x${code.toString(16)}`);
  }
  const type = SCALAR_BY_CODE.get(code & ~0x18);
  if (type === undefined) throw new DecodeError(`unknown type code 0x${code.toString(16)}`);
  if (arrayBits === 0) return { kind: 'scalar', type };
  if (arrayBits === 0x08) return { kind: 'scalarArray', type, array: 'variable' };
  return { kind: 'scalarArray', type, array: arrayBits === 0x10 ? 'bounded' : 'fixed', size: r.count() };
}

/** Write an introspection description (null: 0xFF). With a registry, repeats become 0xFE + id. */
export function encodeType(w: Writer, desc: FieldDesc | null, registry?: TypeRegistry): void {
  if (!desc) {
    w.u8(TypeCode.NULL);
    return;
  }
  if (registry && (desc.kind === 'structure' || desc.kind === 'union' || desc.kind === 'structureArray' || desc.kind === 'unionArray')) {
    const got = registry.idFor(desc);
    if (got) {
      const [id, isNew] = got;
      w.u8(isNew ? TypeCode.FULL_WITH_ID : TypeCode.ONLY_ID);
      w.u16(id);
      if (!isNew) return;
    }
  }
  switch (desc.kind) {
    case 'scalar':
      if (desc.bound !== undefined) {
        w.u8(0x83);
        w.size(desc.bound);
      } else w.u8(SCALAR_CODES[desc.type]);
      return;
    case 'scalarArray':
      w.u8(SCALAR_CODES[desc.type] | ARRAY_BITS[desc.array]);
      if (desc.array !== 'variable') w.size(desc.size ?? 0);
      return;
    case 'structure':
    case 'union':
      w.u8(desc.kind === 'structure' ? 0x80 : 0x81);
      w.string(desc.id);
      w.size(desc.fields.length);
      for (const f of desc.fields) {
        w.string(f.name);
        encodeType(w, f.type, registry);
      }
      return;
    case 'structureArray':
      w.u8(0x88);
      encodeType(w, desc.element, registry);
      return;
    case 'unionArray':
      w.u8(0x89);
      encodeType(w, desc.element, registry);
      return;
    case 'any':
      w.u8(0x82);
      return;
    case 'anyArray':
      w.u8(0x8a);
      return;
  }
}

const bitCounts = new WeakMap<StructureDesc, number>();

/** Bits a structure takes in a BitSet: one for itself plus each of its fields, depth first. */
export function bitCount(desc: StructureDesc): number {
  let n = bitCounts.get(desc);
  if (n !== undefined) return n;
  n = 1;
  for (const f of desc.fields) n += f.type.kind === 'structure' ? bitCount(f.type) : 1;
  bitCounts.set(desc, n);
  return n;
}

const spanCache = new WeakMap<StructureDesc, Int32Array>();

/** The bits each field of a structure takes (bitCount for structures, 1 otherwise), kept per type. */
export function fieldSpans(desc: StructureDesc): Int32Array {
  let spans = spanCache.get(desc);
  if (!spans) {
    spans = new Int32Array(desc.fields.length);
    desc.fields.forEach((f, i) => (spans![i] = f.type.kind === 'structure' ? bitCount(f.type) : 1));
    spanCache.set(desc, spans);
  }
  return spans;
}

/** The BitSet index of a dotted field path ("alarm.severity"; "" is the whole structure). */
export function bitOffset(desc: StructureDesc, path: string): number | undefined {
  if (path === '') return 0;
  let off = 0;
  let cur: StructureDesc = desc;
  const parts = path.split('.');
  for (let p = 0; p < parts.length; p++) {
    let o = off + 1;
    let found: FieldDesc | undefined;
    for (const f of cur.fields) {
      if (f.name === parts[p]) {
        found = f.type;
        break;
      }
      o += f.type.kind === 'structure' ? bitCount(f.type) : 1;
    }
    if (!found) return undefined;
    off = o;
    if (p < parts.length - 1) {
      if (found.kind !== 'structure') return undefined;
      cur = found;
    }
  }
  return off;
}

/** A readable one-line-per-field rendering of a type, for messages and tests. */
export function formatType(desc: FieldDesc | null, indent = ''): string {
  if (!desc) return `${indent}null`;
  switch (desc.kind) {
    case 'scalar':
      return desc.bound !== undefined ? `string<${desc.bound}>` : desc.type;
    case 'scalarArray':
      return `${desc.type}${desc.array === 'variable' ? '[]' : desc.array === 'bounded' ? `<${desc.size}>` : `[${desc.size}]`}`;
    case 'any':
      return 'any';
    case 'anyArray':
      return 'any[]';
    case 'structureArray':
      return `${formatType(desc.element, indent)}[]`;
    case 'unionArray':
      return `${formatType(desc.element, indent)}[]`;
    case 'structure':
    case 'union': {
      const head = `${desc.kind === 'union' ? 'union' : 'structure'}${desc.id ? ' ' + desc.id : ''}`;
      const inner = indent + '  ';
      return [head, ...desc.fields.map((f) => `${inner}${f.name}: ${formatType(f.type, inner)}`)].join('\n');
    }
  }
}
