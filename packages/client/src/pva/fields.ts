// A value's fields set by path, in a structure's type: what a put sends (the client's puts) and
// what a post or a put changes (the server's structures). Plain values are converted to the
// field's type (numbers, bigints, strings, booleans; arrays element by element, typed arrays kept
// when of the field's type); a field the type lacks or a value it cannot hold is a FieldError.
import { BitSet } from './bitset.js';
import { bitOffset, formatType, type FieldDesc, type ScalarType, type StructureDesc } from './types.js';
import { arrayOf, defaultValue, setField, type NumericArray, type PvStructure, type PvValue } from './values.js';

/** A value that cannot go where it was put, or a field the type lacks. */
export class FieldError extends Error {}

/** The value a put accepts: a plain value (for the `value` field) or fields by dotted path. */
export type PvaPutValue = PvValue | { [path: string]: PvValue };

/** The type of a field by dotted path ("alarm.severity"). */
export function fieldAtPath(type: StructureDesc, path: string): FieldDesc | undefined {
  let cur: FieldDesc = type;
  for (const part of path.split('.')) {
    if (cur.kind !== 'structure') return undefined;
    const f: FieldDesc | undefined = cur.fields.find((x) => x.name === part)?.type;
    if (!f) return undefined;
    cur = f;
  }
  return cur;
}

/** Convert a JS value to what the field's type holds (numbers, bigints, strings; arrays element-wise). */
function coerce(desc: FieldDesc, v: PvValue, path: string): PvValue {
  const bad = (why: string): never => {
    throw new FieldError(`cannot put ${String(v)} to ${path} (${formatType(desc)}): ${why}`);
  };
  if (desc.kind === 'scalar') {
    if (typeof v === 'object' && v !== null && (Array.isArray(v) || ArrayBuffer.isView(v))) {
      // One element is the scalar, as a CA put of count 1; more cannot go to one value.
      const a = v as ArrayLike<PvValue>;
      return a.length === 1 ? coerce(desc, a[0]!, path) : bad(`an array of ${a.length} elements to a scalar`);
    }
    const t = desc.type;
    if (t === 'string') return typeof v === 'string' ? v : String(v);
    if (t === 'boolean')
      return typeof v === 'boolean'
        ? v
        : typeof v === 'number'
          ? v !== 0
          : v === 'true'
            ? true
            : v === 'false'
              ? false
              : bad('not a boolean');
    if (t === 'long' || t === 'ulong') {
      try {
        return typeof v === 'bigint' ? v : BigInt(typeof v === 'string' ? v.trim() : (v as number));
      } catch {
        return bad('not an integer');
      }
    }
    const n =
      typeof v === 'number'
        ? v
        : typeof v === 'bigint'
          ? Number(v)
          : typeof v === 'boolean'
            ? +v
            : typeof v === 'string' && v.trim() !== ''
              ? Number(v)
              : NaN;
    if (Number.isNaN(n) && !(typeof v === 'number' || (typeof v === 'string' && /^nan$/i.test(v.trim())))) bad('not a number');
    if (t !== 'float' && t !== 'double' && !Number.isInteger(n)) bad('not an integer');
    return n;
  }
  if (desc.kind === 'scalarArray') {
    if (typeof v !== 'object' || v === null || !('length' in v)) return coerce(desc, [v] as PvValue, path);
    if (ArrayBuffer.isView(v)) {
      const typed = asTypedArray(desc.type, v as NumericArray, path);
      if (typed) return typed;
    }
    const el = { kind: 'scalar', type: desc.type } as FieldDesc;
    return Array.from(v as ArrayLike<PvValue>, (x) => coerce(el, x, path)) as PvValue;
  }
  if (desc.kind === 'structure' && typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
    // A structure given whole: its members converted, those not given at their defaults.
    const out = defaultValue(desc) as PvStructure;
    for (const [k, x] of Object.entries(v as PvStructure)) {
      const f = desc.fields.find((m) => m.name === k);
      if (!f) bad(`no field '${k}'`);
      setField(out, k, coerce(f!.type, x, `${path}.${k}`));
    }
    return out;
  }
  return v;
}

/**
 * A typed array as a numeric field's elements: itself when it is already of the field's type (the
 * encoder then writes its bytes at once), else converted, an integer field taking integers only.
 * Undefined for a boolean or string field.
 */
function asTypedArray(type: ScalarType, v: NumericArray, path: string): NumericArray | undefined {
  const C = arrayOf(type);
  if (!C) return undefined;
  if (v instanceof C) return v;
  const n = v.length;
  const out = new C(n) as unknown as { [i: number]: number | bigint };
  const big = type === 'long' || type === 'ulong';
  const integer = big || (type !== 'float' && type !== 'double');
  for (let i = 0; i < n; i++) {
    const x = v[i]!;
    if (typeof x === 'bigint') out[i] = big ? x : Number(x);
    else {
      if (integer && !Number.isInteger(x))
        throw new FieldError(`cannot put ${x} to ${path}[${i}] (${type}): not ${Number.isNaN(x) ? 'a number' : 'an integer'}`);
      out[i] = big ? BigInt(x) : x;
    }
  }
  return out as unknown as NumericArray;
}

/**
 * The structure and changed bits of a put: a plain value goes to `value` (an NTEnum's index,
 * or its choice by name when `enumChoices` are known), an object's keys are field paths. On a
 * `base` (a server's present value) the fields given replace its own, which is not changed;
 * `paths` are the fields given, as written.
 */
export function putData(
  type: StructureDesc,
  v: PvaPutValue,
  enumChoices?: string[],
  base?: PvStructure,
): { value: PvStructure; changed: BitSet; paths: string[] } {
  const value = base ? { ...base } : (defaultValue(type) as PvStructure);
  const changed = new BitSet();
  const paths: string[] = [];
  const plain = typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v);
  const entries: [string, PvValue][] = plain ? [['value', v as PvValue]] : Object.entries(v as Record<string, PvValue>);
  for (let [path, x] of entries) {
    let desc = fieldAtPath(type, path);
    if (desc?.kind === 'structure' && desc.id === 'enum_t' && path === 'value' && (typeof x !== 'object' || x === null)) {
      if (typeof x === 'string') {
        const i = enumChoices?.indexOf(x) ?? -1;
        if (i < 0) throw new FieldError(`'${x}' is not one of the choices ${JSON.stringify(enumChoices ?? [])}`);
        x = i;
      }
      path = 'value.index';
      desc = fieldAtPath(type, path);
    }
    if (!desc) throw new FieldError(`the channel's structure has no field '${path}'`);
    const bit = bitOffset(type, path)!;
    changed.set(bit);
    paths.push(path);
    const parts = path.split('.');
    let obj = value;
    // The structures on the path are copies: a base's own are left as they were.
    for (const p of parts.slice(0, -1)) obj = obj[p] = { ...(obj[p] as PvStructure) };
    obj[parts[parts.length - 1]!] = coerce(desc, x, path);
  }
  if (changed.isEmpty()) throw new FieldError('nothing to put');
  return { value, changed, paths };
}
