// The PV Access type of a plain JavaScript value, for the values an app gives without a type
// description: RPC arguments and results, structures a server publishes. Numbers are doubles,
// bigints longs, typed arrays their own element type, plain arrays of numbers double arrays,
// objects structures; an `alarm` or `timeStamp` object is the normative types' alarm_t and time_t.
// A value already typed ({ type, value }) is taken as it is.
import { ALARM_T as ALARM, TIME_T as TIME } from './nt.js';
import { scalar, scalarArray, structure, type FieldDesc, type ScalarType, type StructureDesc } from './types.js';
import { setField, type PvStructure, type PvValue, type Typed } from './values.js';

const KINDS = new Set(['scalar', 'scalarArray', 'structure', 'union', 'structureArray', 'unionArray', 'any', 'anyArray']);

/** A value with its type description, as the codecs take it ({ type, value } with a FieldDesc). */
export function isTyped(v: unknown): v is Typed {
  if (typeof v !== 'object' || v === null || !('type' in v) || !('value' in v)) return false;
  const t = (v as { type: unknown }).type;
  return typeof t === 'object' && t !== null && KINDS.has((t as { kind?: unknown }).kind as string);
}

const TYPED_ARRAYS: [new (n: number) => ArrayLike<unknown>, ScalarType][] = [
  [Float64Array, 'double'],
  [Float32Array, 'float'],
  [Int8Array, 'byte'],
  [Uint8Array, 'ubyte'],
  [Int16Array, 'short'],
  [Uint16Array, 'ushort'],
  [Int32Array, 'int'],
  [Uint32Array, 'uint'],
  [BigInt64Array, 'long'],
  [BigUint64Array, 'ulong'],
];

/** An alarm_t or time_t field given as a plain object: the standard type, the members not given at 0 (or ""). */
function standard(key: string, v: unknown): { type: FieldDesc; value: PvValue } | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v) || isTyped(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (key === 'alarm')
    return { type: ALARM, value: { severity: Number(o.severity ?? 0), status: Number(o.status ?? 0), message: String(o.message ?? '') } };
  if (key === 'timeStamp')
    return {
      type: TIME,
      value: {
        secondsPastEpoch: BigInt(Math.trunc(Number(o.secondsPastEpoch ?? 0))),
        nanoseconds: Number(o.nanoseconds ?? 0),
        userTag: Number(o.userTag ?? 0),
      },
    };
  return undefined;
}

/** The type and the value as the codecs hold it (plain number arrays become Float64Arrays). */
function infer(v: unknown, path: string): { type: FieldDesc; value: PvValue } {
  switch (typeof v) {
    case 'number':
      return { type: scalar('double'), value: v };
    case 'bigint':
      return { type: scalar('long'), value: v };
    case 'boolean':
      return { type: scalar('boolean'), value: v };
    case 'string':
      return { type: scalar('string'), value: v };
  }
  if (ArrayBuffer.isView(v)) {
    const hit = TYPED_ARRAYS.find(([ctor]) => v instanceof ctor);
    if (!hit) throw new TypeError(`${path}: a ${v.constructor.name} has no PV Access type`);
    return { type: scalarArray(hit[1]), value: v as unknown as PvValue };
  }
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'number')) return { type: scalarArray('double'), value: Float64Array.from(v as number[]) };
    if (v.every((x) => typeof x === 'string')) return { type: scalarArray('string'), value: [...(v as string[])] };
    if (v.every((x) => typeof x === 'boolean')) return { type: scalarArray('boolean'), value: [...(v as boolean[])] };
    throw new TypeError(`${path}: an array must hold only numbers, only strings or only booleans`);
  }
  if (typeof v === 'object' && v !== null) return typedOf(v as Record<string, unknown>, 'structure', path);
  throw new TypeError(`${path}: ${v === null ? 'null' : typeof v} has no PV Access type`);
}

/** A structure's type and value from a plain object (its fields in their order), or a typed structure as it is. */
export function typedOf(v: Record<string, unknown> | Typed, id = 'structure', path = ''): { type: StructureDesc; value: PvStructure } {
  if (isTyped(v)) {
    if (v.type.kind !== 'structure') throw new TypeError(`${path || 'the value'}: a typed value must be a structure`);
    return { type: v.type, value: v.value as PvStructure };
  }
  const fields: Record<string, FieldDesc> = {};
  const value: PvStructure = {};
  for (const [k, x] of Object.entries(v)) {
    const t = standard(k, x) ?? infer(x, path ? `${path}.${k}` : k);
    fields[k] = t.type;
    setField(value, k, t.value);
  }
  return { type: structure(id, fields), value };
}
