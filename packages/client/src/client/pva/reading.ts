// What a PV Access read or monitor update gives: the normative-type shape (NTScalar, NTEnum, ...)
// with the value, alarm and timestamp lifted out, in the same shape as a CA Reading.
import { ntName, toNT, type NTValue } from '../../pva/nt.js';
import type { FieldDesc, StructureDesc } from '../../pva/types.js';
import type { NumericArray, PvStructure, PvValue } from '../../pva/values.js';

/** The value of a PVA reading: a scalar (64-bit integers as bigint), a typed array, strings, or a structure. */
export type PvaValue = number | bigint | string | boolean | NumericArray | string[] | boolean[] | PvValue | null;

const isObj = (v: unknown): v is PvStructure => typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
/** The bigint converted last: updates share their timestamp's seconds (the reader reads one bigint for them). */
let lastBig = 0n;
let lastNum = 0;
const num = (v: unknown): number => {
  if (typeof v === 'number') return v;
  if (typeof v !== 'bigint') return 0;
  if (v !== lastBig) {
    lastNum = Number(v);
    lastBig = v;
  }
  return lastNum;
};

/**
 * What the readings of one type read, found once per type: its normative type, and whether its
 * alarm and timeStamp are the normative alarm_t and time_t (each field of a scalar type that
 * decodes as the reading's field, so the constructor reads them unchecked), absent, or something
 * else (checked as they come).
 */
interface Layout {
  kind: string;
  alarm: Shape;
  timeStamp: Shape;
}
enum Shape {
  Absent,
  Normative,
  Other,
}

const layouts = new WeakMap<FieldDesc, Layout>();

/** The last type looked up, and its layout: a monitor's updates come one after another with one type. */
let lastType: FieldDesc | undefined;
let lastLayout: Layout | undefined;

/** The scalar types that decode as numbers: the 32-bit and smaller integers. */
const INTS = ['byte', 'short', 'int', 'ubyte', 'ushort', 'uint'];
/** The fields of a normative alarm_t and time_t, each with the scalar types that decode as the reading's field. */
const ALARM_FIELDS: Record<string, string[]> = { severity: INTS, status: INTS, message: ['string'] };
const TIME_FIELDS: Record<string, string[]> = { secondsPastEpoch: ['long', ...INTS], nanoseconds: INTS, userTag: INTS };

/** How field `name` of a structure type holds an alarm_t or time_t (`want`: each field's scalar types). */
function shapeOf(type: StructureDesc, name: string, want: Record<string, string[]>): Shape {
  const matches = type.fields.filter((f) => f.name === name);
  if (matches.length === 0) return Shape.Absent;
  const t = matches[0]!.type;
  if (matches.length > 1 || t.kind !== 'structure') return Shape.Other;
  for (const [field, types] of Object.entries(want)) {
    const fs = t.fields.filter((f) => f.name === field);
    if (fs.length !== 1 || fs[0]!.type.kind !== 'scalar' || !types.includes(fs[0]!.type.type)) return Shape.Other;
  }
  return Shape.Normative;
}

/** The layout of a type's readings, made once per type. */
function layoutOf(type: FieldDesc): Layout {
  if (type === lastType) return lastLayout!;
  let l = layouts.get(type);
  if (l === undefined) {
    l =
      type.kind === 'structure'
        ? { kind: ntName(type.id) ?? '', alarm: shapeOf(type, 'alarm', ALARM_FIELDS), timeStamp: shapeOf(type, 'timeStamp', TIME_FIELDS) }
        : { kind: '', alarm: Shape.Absent, timeStamp: Shape.Absent };
    layouts.set(type, l);
  }
  lastType = type;
  lastLayout = l;
  return l;
}

export class PvaReading {
  readonly kind = 'update' as const;
  /** The main value: NTScalar/NTScalarArray value, NTEnum index, NTTable columns, NTNDArray data, else the value field or the structure. */
  readonly value: PvaValue;
  /** Alarm severity (0 NO_ALARM .. 3 INVALID) and status; 0 when the structure has no alarm. */
  readonly severity: number;
  readonly status: number;
  /** Alarm message (QSRV puts the CA alarm status name here). */
  readonly message: string;
  /** Seconds past the POSIX epoch (PVA timestamps count from 1970), nanoseconds, user tag. */
  readonly secondsPastEpoch: number;
  readonly nanoseconds: number;
  readonly userTag: number;
  #nt: NTValue | undefined;

  constructor(
    /** The structure's type as the server described it. */
    readonly type: FieldDesc,
    /**
     * The structure as decoded: every field of the type, the type's default where the server sent
     * nothing. A monitor's later updates never change it (each is a new reading), but they share
     * the structures they do not change with it: read it, do not change it.
     */
    readonly raw: PvStructure,
  ) {
    const layout = layoutOf(type);
    switch (layout.kind) {
      case 'NTScalar':
      case 'NTScalarArray':
        this.value = raw.value as PvaValue;
        break;
      case 'NTEnum':
        this.value = isObj(raw.value) ? num(raw.value.index) : 0;
        break;
      case 'NTTable':
      case 'NTNDArray':
        this.value = this.nt.kind === 'NTTable' ? (this.nt.columns as PvValue) : (this.nt as { value: PvaValue }).value;
        break;
      default:
        this.value = isObj(raw) && 'value' in raw ? raw.value! : raw;
    }
    // A value holds every field of its type: a normative alarm_t's are two numbers and a string, a time_t's numbers but its seconds (a bigint when a long).
    if (layout.alarm === Shape.Normative) {
      const a = raw.alarm as { severity: number; status: number; message: string };
      this.severity = a.severity;
      this.status = a.status;
      this.message = a.message;
    } else {
      const alarm = layout.alarm === Shape.Other && isObj(raw.alarm) ? raw.alarm : undefined;
      this.severity = alarm ? num(alarm.severity) : 0;
      this.status = alarm ? num(alarm.status) : 0;
      this.message = alarm && typeof alarm.message === 'string' ? alarm.message : '';
    }
    if (layout.timeStamp === Shape.Normative) {
      const ts = raw.timeStamp as { secondsPastEpoch: bigint | number; nanoseconds: number; userTag: number };
      this.secondsPastEpoch = num(ts.secondsPastEpoch);
      this.nanoseconds = ts.nanoseconds;
      this.userTag = ts.userTag;
    } else {
      const ts = layout.timeStamp === Shape.Other && isObj(raw.timeStamp) ? raw.timeStamp : undefined;
      this.secondsPastEpoch = ts ? num(ts.secondsPastEpoch) : 0;
      this.nanoseconds = ts ? num(ts.nanoseconds) : 0;
      this.userTag = ts ? num(ts.userTag) : 0;
    }
  }

  /** The value in its normative-type shape (kind 'plain' for other structures); made on first use. */
  get nt(): NTValue {
    return (this.#nt ??= toNT(this.type, this.raw));
  }

  /** The timestamp as a Date (millisecond precision). */
  get timestamp(): Date {
    return new Date(this.secondsPastEpoch * 1000 + Math.floor(this.nanoseconds / 1e6));
  }

  /** The timestamp as POSIX seconds (a float). */
  get posixSeconds(): number {
    return this.secondsPastEpoch + this.nanoseconds / 1e9;
  }
}
