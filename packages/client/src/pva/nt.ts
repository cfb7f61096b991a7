// Normative types: a decoded value and its type as plain typed JS shapes for NTScalar,
// NTScalarArray, NTEnum, NTTable and NTNDArray; any other structure comes back as a plain object.
import { scalar, structure, type FieldDesc, type StructureDesc } from './types.js';
import type { NumericArray, PvAny, PvStructure, PvUnion, PvValue } from './values.js';

/** The normative types' alarm_t, as pvxs and QSRV declare it. */
export const ALARM_T = structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') });
/** The normative types' time_t, as pvxs and QSRV declare it. */
export const TIME_T = structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') });

export interface Alarm {
  severity: number;
  status: number;
  message: string;
}
export interface TimeStamp {
  secondsPastEpoch: number;
  nanoseconds: number;
  userTag: number;
}
export interface Display {
  limitLow?: number;
  limitHigh?: number;
  description?: string;
  units?: string;
  precision?: number;
}
export interface Control {
  limitLow?: number;
  limitHigh?: number;
  minStep?: number;
}
/** The alarm and timestamp every normative type may carry. @inline */
interface Common {
  alarm?: Alarm;
  timeStamp?: TimeStamp;
}

export type NTValue =
  | ({ kind: 'NTScalar'; value: number | bigint | string | boolean; display?: Display; control?: Control } & Common)
  | ({ kind: 'NTScalarArray'; value: NumericArray | string[] | boolean[]; display?: Display; control?: Control } & Common)
  | ({ kind: 'NTEnum'; value: { index: number; choices: string[] } } & Common)
  | ({ kind: 'NTTable'; labels: string[]; columns: Record<string, PvValue> } & Common)
  | ({
      kind: 'NTNDArray';
      value: NumericArray | null;
      dimension: { size: number; offset: number; fullSize: number; binning: number; reverse: boolean }[];
      uniqueId: number;
      codec: { name: string; parameters: PvAny | null };
      compressedSize: number;
      uncompressedSize: number;
      dataTimeStamp?: TimeStamp;
      attribute: { name: string; value: PvAny | null; descriptor: string; sourceType: number; source: string }[];
    } & Common)
  | { kind: 'plain'; id: string; value: PvValue };

/** The normative type name of a structure id: "epics:nt/NTScalar:1.0" gives "NTScalar". */
export function ntName(id: string): string | undefined {
  const m = /^epics:nt\/(NT\w+):\d+(\.\d+)*$/.exec(id);
  return m?.[1];
}

const isObj = (v: unknown): v is PvStructure => typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
const n = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'boolean' ? +v : 0);
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

function alarmOf(v: unknown): Alarm | undefined {
  return isObj(v) ? { severity: n(v.severity), status: n(v.status), message: s(v.message) } : undefined;
}
function timeOf(v: unknown): TimeStamp | undefined {
  return isObj(v) ? { secondsPastEpoch: n(v.secondsPastEpoch), nanoseconds: n(v.nanoseconds), userTag: n(v.userTag) } : undefined;
}
function pick<T extends object>(v: unknown, keys: Record<string, 'n' | 's'>): T | undefined {
  if (!isObj(v)) return undefined;
  const out: Record<string, number | string> = {};
  for (const [k, t] of Object.entries(keys)) if (k in v) out[k] = t === 'n' ? n(v[k]) : s(v[k]);
  return out as T;
}
const DISPLAY = { limitLow: 'n', limitHigh: 'n', description: 's', units: 's', precision: 'n' } as const;
const CONTROL = { limitLow: 'n', limitHigh: 'n', minStep: 'n' } as const;

function common(v: PvStructure): Common {
  const out: Common = {};
  const a = alarmOf(v.alarm),
    t = timeOf(v.timeStamp);
  if (a) out.alarm = a;
  if (t) out.timeStamp = t;
  return out;
}
function meta(v: PvStructure): { display?: Display; control?: Control } {
  const out: { display?: Display; control?: Control } = {};
  const d = pick<Display>(v.display, DISPLAY),
    c = pick<Control>(v.control, CONTROL);
  if (d) out.display = d;
  if (c) out.control = c;
  return out;
}

/** Convert a decoded value of `type` to its normative-type shape (or a plain object). */
export function toNT(type: FieldDesc, value: PvValue): NTValue {
  if (type.kind !== 'structure' || !isObj(value)) return { kind: 'plain', id: '', value };
  const name = ntName(type.id);
  const v = value;
  switch (name) {
    case 'NTScalar':
      return { kind: 'NTScalar', value: v.value as number | bigint | string | boolean, ...common(v), ...meta(v) };
    case 'NTScalarArray':
      return { kind: 'NTScalarArray', value: v.value as NumericArray | string[] | boolean[], ...common(v), ...meta(v) };
    case 'NTEnum': {
      const e = isObj(v.value) ? v.value : {};
      return {
        kind: 'NTEnum',
        value: { index: n(e.index), choices: Array.isArray(e.choices) ? (e.choices as string[]) : [] },
        ...common(v),
      };
    }
    case 'NTTable': {
      const columns = isObj(v.value) ? { ...v.value } : {};
      return { kind: 'NTTable', labels: Array.isArray(v.labels) ? (v.labels as string[]) : Object.keys(columns), columns, ...common(v) };
    }
    case 'NTNDArray':
      return ndArray(v);
  }
  return { kind: 'plain', id: (type as StructureDesc).id, value };
}

function ndArray(v: PvStructure): NTValue {
  const u = v.value as PvUnion | undefined;
  const codec = isObj(v.codec) ? v.codec : {};
  const dims = Array.isArray(v.dimension) ? (v.dimension as (PvStructure | null)[]) : [];
  const attrs = Array.isArray(v.attribute) ? (v.attribute as (PvStructure | null)[]) : [];
  const out: NTValue = {
    kind: 'NTNDArray',
    value: u && u.value !== null && ArrayBuffer.isView(u.value) ? (u.value as NumericArray) : null,
    dimension: dims
      .filter(isObj)
      .map((d) => ({ size: n(d.size), offset: n(d.offset), fullSize: n(d.fullSize), binning: n(d.binning), reverse: Boolean(d.reverse) })),
    uniqueId: n(v.uniqueId),
    codec: { name: s(codec.name), parameters: (codec.parameters as PvAny | undefined) ?? null },
    compressedSize: n(v.compressedSize),
    uncompressedSize: n(v.uncompressedSize),
    attribute: attrs.filter(isObj).map((a) => ({
      name: s(a.name),
      value: (a.value as PvAny | undefined) ?? null,
      descriptor: s(a.descriptor),
      sourceType: n(a.sourceType),
      source: s(a.source),
    })),
    ...common(v),
  };
  const dts = timeOf(v.dataTimeStamp);
  if (dts) out.dataTimeStamp = dts;
  return out;
}
