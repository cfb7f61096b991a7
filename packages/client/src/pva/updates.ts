// Data that marks some of a structure's fields (GET replies, PUT get-backs, monitor updates),
// decoded into a new value whose unmarked fields come from a base: the type's defaults or a last
// value left unchanged (decodeUpdate), or a monitor's own copy of its fields, which it changes in
// place (UpdateBase). Each set of marked fields of a type gets a decoder compiled for it.
import type { BitSet } from './bitset.js';
import { DecodeError, type Reader } from './buffer.js';
import { PLAN_FIELDS, planKind, planOf } from './plans.js';
import { fieldSpans, MAX_TYPE_DEPTH, type FieldDesc, type ScalarType, type StructureDesc, type TypeCache } from './types.js';
import { copierOf, decodeValue, isStruct, setField, sharedDefault, type PvStructure, type PvValue } from './values.js';

/**
 * Read the fields `bits` selects into `target` (a full value of `desc`, whose top-level fields are
 * replaced), as GET replies and monitor updates carry them: decodeUpdate, kept for callers that hold
 * one value. A set structure bit means the whole structure follows.
 */
export function decodePartial(r: Reader, desc: StructureDesc, target: PvStructure, bits: BitSet, cache: TypeCache | undefined): void {
  Object.assign(target, decodeUpdate(r, desc, target, bits, cache));
}

/**
 * Read the fields `bits` selects into a new structure that holds every field of `desc`, as GET
 * replies and PUT get-backs carry them. With `prev` (a last value, not changed: it and the
 * structures inside it that the data touches are copied, the others shared) an unselected field
 * keeps its value there; without it the type's default. A set structure bit means the whole
 * structure follows.
 */
export function decodeUpdate(
  r: Reader,
  desc: StructureDesc,
  prev: PvStructure | undefined,
  bits: BitSet,
  cache: TypeCache | undefined,
): PvStructure {
  if (bits.get(0)) return decodeValue(r, desc, cache) as PvStructure;
  const base = prev ?? (sharedDefault(desc) as PvStructure);
  const plan = planOf(copyPlans, desc, bits);
  return plan ? plan(r, base, cache) : walk(r, desc, base, bits, 0, false, false, cache, 0);
}

/**
 * A monitor's fields between its updates, the base of the next one, which marks only what changed
 * (updateBase, decodeInto).
 *
 * Each update is a new structure that nothing changes later, sharing with the last one the
 * structures it does not touch. The base is not such a value but a copy of the fields, which each
 * update changes in place: keeping the last value itself as the base would keep every update's new
 * objects alive until the next one, a second at 1 Hz, long enough for V8 to move them to its old
 * generation, which then grows with garbage between its major collections (100,000 monitors of
 * counters: 420 MB of RSS on a live heap of 127). What a base keeps is made once; an update's new
 * objects die young unless the application keeps them.
 *
 * The structures of the base are its own from the update that first touches them until one that
 * does not: then that structure's new value, made from them once, takes their place in the base
 * (and the next update that touches it copies it again). Until first touched a field holds the
 * type's shared default. Unchanged structures so stay shared from one update to the next, and a
 * base holds one object per structure.
 *
 * Which of a structure's fields hold its own structures is a mask in the structure itself: an
 * update finds the ones it does not touch unchanged without reading them (an NTScalar counter's
 * update would otherwise read its alarm, display, control and valueAlarm, which 100,000 monitors
 * keep far apart in memory).
 */
export type UpdateBase = { readonly [BASE]: true };

/**
 * The key of a base's own structures (given values, which nothing changes, lack it): the mask of
 * their fields that hold own structures, bit i for structure field i (field 31 and later share
 * bit 31, which then says only that one of them may be).
 */
const OWN = Symbol('own');
declare const BASE: unique symbol;
type Node = PvStructure & { [OWN]?: number };

/** The bit of fields 31 and later. */
const LAST_BIT = 1 << 31;
/** The bit of field `i` in a structure's mask of own fields. */
const ownBit = (i: number): number => (i < 31 ? 1 << i : LAST_BIT);

/** A new base for a monitor of `desc`: every field its default. */
export function updateBase(desc: StructureDesc): UpdateBase {
  return thaw(sharedDefault(desc) as PvStructure, desc) as unknown as UpdateBase;
}

/** Read an update marking `bits` into `base` (of `desc`): a new value of every field of the type. A set structure bit means the whole structure follows. */
export function decodeInto(r: Reader, desc: StructureDesc, base: UpdateBase, bits: BitSet, cache: TypeCache | undefined): PvStructure {
  const top = base as unknown as Node;
  const plan = planOf(basePlans, desc, bits);
  return plan ? plan(r, top, cache) : walk(r, desc, top, bits, 0, bits.get(0), true, cache, 0);
}

/** A structure of the base's own, copied from a given value (or a default) of `desc`, to be changed in place: none of its fields own. */
const thaw = (v: PvStructure, desc: StructureDesc): Node => copierOf(desc, OWN)(v) as Node;

/**
 * The structure `v` in field `name` (field `bit` of the mask) of `parent`, which an update
 * touches: the base's own, made from the given value there if it is not yet. (A base's structure
 * fields always hold structures; the compiled plans read `v` where the field's name is written out.)
 */
function touch(parent: Node, name: string, v: Node, desc: FieldDesc, bit: number): Node {
  // Whether `v` is the base's own: its parent's mask says so (`v` itself only for the shared last
  // bit), and `v` is not read before the update writes it.
  if ((parent[OWN]! & bit) !== 0 && (bit !== LAST_BIT || v[OWN] !== undefined)) return v;
  const n = thaw(v, desc as StructureDesc);
  setField(parent, name, n);
  parent[OWN]! |= bit;
  return n;
}

/**
 * The last given value made of each structure type of scalars. A given value equal to it field for
 * field is that one: the monitors of many channels of one type (100,000 counters' alarms, all
 * NO_ALARM) then share one value, which their readings read without a cache miss each. (Only
 * scalars: what is kept here for the next is small.)
 */
const lastGiven = new WeakMap<StructureDesc, PvStructure>();

/**
 * The value of structure `v` in field `name` (field `bit` of the mask) of `parent`, which an
 * update does not touch: a given value, made from the base's own once and put in its place.
 */
function given(parent: Node, name: string, v: Node, desc: FieldDesc, bit: number): PvValue {
  if ((parent[OWN]! & bit) === 0 || v[OWN] === undefined) return v;
  const d = desc as StructureDesc;
  let out = copierOf(d)(v);
  d.fields.forEach((f, i) => {
    if (f.type.kind === 'structure') setField(out, f.name, given(v, f.name, v[f.name] as Node, f.type, ownBit(i)));
  });
  if (d.fields.every((f) => f.type.kind === 'scalar')) {
    const last = lastGiven.get(d);
    if (last !== undefined && d.fields.every((f) => Object.is(last[f.name], out[f.name]))) out = last;
    else lastGiven.set(d, out);
  }
  setField(parent, name, out);
  if (bit !== LAST_BIT) parent[OWN]! &= ~bit;
  return out;
}

type Plan<B> = (r: Reader, base: B, cache: TypeCache | undefined) => PvStructure;
const READS: Partial<Record<ScalarType, string>> = {
  boolean: 'bool',
  byte: 'i8',
  ubyte: 'u8',
  short: 'i16',
  ushort: 'u16',
  int: 'i32',
  uint: 'u32',
  long: 'i64',
  ulong: 'u64',
  float: 'f32',
  double: 'f64',
  string: 'string',
};

/**
 * A compiled decoder for one type and one set of marked fields: a monitor's updates mark the same
 * fields again and again (a counter's: the value and the timestamp's three), so each set gets a
 * function of its own that reads them in order, then, on a base, writes them there, and builds
 * the new structure as object literals (several times faster than the general walk below, which
 * stays for the rest). On a last value (`onBase` false) a structure marked whole is decoded whole;
 * on a base its fields are read one by one into the base, as the bytes are the same.
 */
function compilePlan<B>(desc: StructureDesc, bits: BitSet, onBase: boolean): Plan<B> | null {
  const types: FieldDesc[] = [];
  const reads: string[] = [];
  const writes: string[] = [];
  let vars = 0;
  let fields = 0;
  const type = (t: FieldDesc) => `types[${types.push(t) - 1}]`;
  /** The literal of structure `d` (bits from `base + 1`) whose last fields are in `prev`; all: every field marked. */
  const build = (d: StructureDesc, base: number, prev: string, depth: number, all: boolean): string | null => {
    if (depth > MAX_TYPE_DEPTH || (fields += d.fields.length) > PLAN_FIELDS) return null;
    const names = d.fields.map((f) => f.name);
    if (names.includes('__proto__') || new Set(names).size !== names.length) return null;
    const spans = fieldSpans(d);
    const parts: string[] = [];
    let off = base + 1;
    for (let i = 0; i < d.fields.length; i++) {
      const f = d.fields[i]!;
      const key = JSON.stringify(f.name);
      const span = spans[i]!;
      const marked = all || bits.get(off);
      const struct = f.type.kind === 'structure';
      let expr: string | null;
      if (marked && !(onBase && struct)) {
        const v = `v${vars++}`;
        const read = f.type.kind === 'scalar' ? READS[f.type.type] : undefined;
        if (read) reads.push(`const ${v} = r.${read}();`);
        else reads.push(`const ${v} = decode(r, ${type(f.type)}, cache, ${depth + 1});`);
        if (onBase) writes.push(`${prev}[${key}] = ${v};`);
        expr = v;
      } else if (struct && (marked || (span > 1 && bits.anyIn(off + 1, off + span)))) {
        const sub = `p${vars++}`;
        if (onBase) writes.push(`const ${sub} = touch(${prev}, ${key}, ${prev}[${key}], ${type(f.type)}, ${ownBit(i)});`);
        else reads.push(`const ${sub} = structOr(${prev}[${key}], ${type(f.type)});`);
        expr = build(f.type as StructureDesc, off, sub, depth + 1, marked);
        if (expr === null) return null;
      } else if (onBase && struct) {
        // Read only when the mask says it is the base's own: else the given value there is the field's.
        const bit = ownBit(i);
        expr = `((${prev}[own] & ${bit}) === 0 ? ${prev}[${key}] : given(${prev}, ${key}, ${prev}[${key}], ${type(f.type)}, ${bit}))`;
      } else expr = `${prev}[${key}]`;
      parts.push(`${key}: ${expr}`);
      off += span;
    }
    return `{${parts.join(', ')}}`;
  };
  const literal = build(desc, 0, 'prev', 0, onBase && bits.get(0));
  if (literal === null) return null;
  try {
    const make = new Function(
      'types',
      'decode',
      'structOr',
      'touch',
      'given',
      'own',
      `return (r, prev, cache) => {\n${reads.join('\n')}\n${writes.join('\n')}\nreturn ${literal};\n};`,
    );
    return make(types, decodeValue, structOr, touch, given, OWN) as Plan<B>;
  } catch {
    return null; // code generation from strings disallowed here
  }
}

const copyPlans = planKind<Plan<PvStructure>>((d, b) => compilePlan(d, b, false));
const basePlans = planKind<Plan<Node>>((d, b) => compilePlan(d, b, true));

/** A structure field of a last value, or the type's default where it holds none. */
const structOr = (v: PvValue | undefined, desc: FieldDesc): PvStructure => (isStruct(v) ? v : (sharedDefault(desc) as PvStructure));

/**
 * The general walk beyond the compiled plans, in the same two ways: on a last value (`onBase`
 * false), a copy of `prev` with the marked fields read in; on a base, the marked fields read into
 * `prev` (all: every field marked) and the new value made.
 */
function walk(
  r: Reader,
  desc: StructureDesc,
  prev: PvStructure,
  bits: BitSet,
  base: number,
  all: boolean,
  onBase: boolean,
  cache: TypeCache | undefined,
  depth: number,
): PvStructure {
  if (depth > MAX_TYPE_DEPTH) throw new DecodeError('value nesting too deep');
  const out = onBase ? {} : copierOf(desc)(prev);
  const spans = fieldSpans(desc);
  const fields = desc.fields;
  let off = base + 1;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const name = f.name;
    const span = spans[i]!;
    const marked = all || bits.get(off);
    const struct = f.type.kind === 'structure';
    if (marked && !(onBase && struct)) {
      const v = decodeValue(r, f.type, cache, depth + 1);
      if (onBase) setField(prev, name, v);
      setField(out, name, v);
    } else if (struct && (marked || (span > 1 && bits.anyIn(off + 1, off + span)))) {
      const sub = onBase ? touch(prev, name, prev[name] as Node, f.type, ownBit(i)) : structOr(prev[name], f.type);
      setField(out, name, walk(r, f.type as StructureDesc, sub, bits, off, marked, onBase, cache, depth + 1));
    } else if (onBase) setField(out, name, struct ? given(prev, name, prev[name] as Node, f.type, ownBit(i)) : prev[name]!);
    off += span;
  }
  return out;
}
