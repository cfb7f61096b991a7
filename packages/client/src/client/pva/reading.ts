// What a PV Access read or monitor update gives: the normative-type shape (NTScalar, NTEnum, ...)
// with the value, alarm and timestamp lifted out, in the same shape as a CA Reading.
import { ntName, toNT, type NTValue } from '../../pva/nt.js';
import type { FieldDesc } from '../../pva/types.js';
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

const kinds = new WeakMap<FieldDesc, string>();

/** The last type looked up, and its kind: a monitor's updates come one after another with one type. */
let lastType: FieldDesc | undefined;
let lastKind = '';

/** The normative type of a type description ('' for none), looked up once per type. */
function kindOf(type: FieldDesc): string {
  if (type === lastType) return lastKind;
  let k = kinds.get(type);
  if (k === undefined) {
    k = type.kind === 'structure' ? (ntName(type.id) ?? '') : '';
    kinds.set(type, k);
  }
  lastType = type;
  lastKind = k;
  return k;
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
    switch (kindOf(type)) {
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
    const alarm = isObj(raw.alarm) ? raw.alarm : undefined;
    const ts = isObj(raw.timeStamp) ? raw.timeStamp : undefined;
    this.severity = alarm ? num(alarm.severity) : 0;
    this.status = alarm ? num(alarm.status) : 0;
    this.message = alarm && typeof alarm.message === 'string' ? alarm.message : '';
    this.secondsPastEpoch = ts ? num(ts.secondsPastEpoch) : 0;
    this.nanoseconds = ts ? num(ts.nanoseconds) : 0;
    this.userTag = ts ? num(ts.userTag) : 0;
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
