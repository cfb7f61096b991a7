// A served PV as PV Access sees it: NTScalar, NTScalarArray or NTEnum with the fields QSRV gives
// a record's (alarm, timeStamp, display, control, valueAlarm), the type made once per PV shape,
// the value made from the PV's state.
import { ALARM_T as ALARM, TIME_T as TIME } from '../../pva/nt.js';
import { ALARM_STATUS_NAMES, DbrType } from '../../ca/constants.js';
import { scalar, scalarArray, structure, type FieldDesc, type ScalarType, type StructureDesc } from '../../pva/types.js';
import type { PvStructure, PvValue } from '../../pva/values.js';
import type { DbrMetadata } from '../../ca/dbr.js';
import type { ServedPv, ServedValue } from '../pv.js';

const ELEMENT: Record<number, ScalarType> = {
  [DbrType.STRING]: 'string',
  [DbrType.SHORT]: 'short',
  [DbrType.FLOAT]: 'float',
  [DbrType.ENUM]: 'ushort',
  [DbrType.CHAR]: 'ubyte',
  [DbrType.LONG]: 'int',
  [DbrType.DOUBLE]: 'double',
};

/** display.form, as QSRV declares it. */
const FORM = structure('enum_t', { index: scalar('int'), choices: scalarArray('string') });
const FORMS = ['Default', 'String', 'Binary', 'Decimal', 'Hex', 'Exponential', 'Engineering'];

const types = new Map<string, StructureDesc>();

/** The PV's element type over PV Access. */
const elementOf = (pv: ServedPv): ScalarType => pv.pvaElement ?? ELEMENT[pv.type] ?? 'double';

/**
 * The PV's normative type, field for field as QSRV gives a record's: NTEnum for enums;
 * NTScalar or NTScalarArray with display (for numbers: limits of the value's type, precision,
 * form) and, for numbers, control and valueAlarm.
 */
export function ntTypeOf(pv: ServedPv): StructureDesc {
  const el = elementOf(pv);
  const array = pv.maxCount > 1;
  const key = pv.type === DbrType.ENUM ? 'enum' : `${el}:${array ? 'a' : 's'}`;
  let t = types.get(key);
  if (t) return t;
  if (pv.type === DbrType.ENUM)
    t = structure('epics:nt/NTEnum:1.0', {
      value: structure('enum_t', { index: scalar('int'), choices: scalarArray('string') }),
      alarm: ALARM,
      timeStamp: TIME,
      display: structure('structure', { description: scalar('string') }),
    });
  else {
    const id = array ? 'epics:nt/NTScalarArray:1.0' : 'epics:nt/NTScalar:1.0';
    const value = array ? scalarArray(el) : scalar(el);
    if (el === 'string')
      t = structure(id, {
        value,
        alarm: ALARM,
        timeStamp: TIME,
        display: structure('structure', { description: scalar('string'), units: scalar('string') }),
      });
    else {
      const T = scalar(el);
      t = structure(id, {
        value,
        alarm: ALARM,
        timeStamp: TIME,
        display: structure('structure', {
          limitLow: T,
          limitHigh: T,
          description: scalar('string'),
          units: scalar('string'),
          precision: scalar('int'),
          form: FORM,
        }),
        control: structure('structure', { limitLow: T, limitHigh: T, minStep: T }),
        valueAlarm: structure('structure', {
          active: scalar('boolean'),
          lowAlarmLimit: T,
          lowWarningLimit: T,
          highWarningLimit: T,
          highAlarmLimit: T,
          lowAlarmSeverity: scalar('int'),
          lowWarningSeverity: scalar('int'),
          highWarningSeverity: scalar('int'),
          highAlarmSeverity: scalar('int'),
          hysteresis: scalar('double'),
        }),
      });
    }
  }
  types.set(key, t);
  return t;
}

const selections = new WeakMap<StructureDesc, Map<string, StructureDesc | undefined>>();

/**
 * The part of `desc` a pvRequest's `field` selects, as pvxs serves it: none (or an empty one)
 * selects every field, `field(value,alarm)` those two, `field(display.units)` a structure with
 * only that member; names the type lacks are left out, and a selection of nothing is undefined
 * (an error for the request). Made once per type and selection.
 */
export function selectFields(desc: StructureDesc, field: unknown): StructureDesc | undefined {
  if (!field || typeof field !== 'object' || Object.keys(field).length === 0) return desc;
  let byKey = selections.get(desc);
  if (!byKey) selections.set(desc, (byKey = new Map()));
  const key = JSON.stringify(field);
  if (byKey.has(key)) return byKey.get(key);
  const fields: Record<string, FieldDesc> = {};
  for (const f of desc.fields) {
    const sub = (field as Record<string, unknown>)[f.name];
    if (sub === undefined) continue;
    const part = f.type.kind === 'structure' ? selectFields(f.type, sub) : f.type;
    if (part) fields[f.name] = part;
  }
  const out = Object.keys(fields).length ? structure(desc.id, fields) : undefined;
  byKey.set(key, out);
  return out;
}

/** CA alarm conditions as PV Access alarm statuses (DEVICE, DRIVER, RECORD, DB), as QSRV maps them. */
function pvaStatus(caStatus: number): number {
  if (caStatus === 0) return 0;
  if (caStatus <= 8 || caStatus === 11) return 1;
  if (caStatus <= 10 || caStatus === 17) return 2;
  if (caStatus <= 16) return 3;
  if (caStatus <= 21) return 4;
  return 6;
}

/** The PV's alarm: the status as QSRV maps it, the message the CA condition's name. */
export function ntAlarm(severity: number, status: number): { severity: number; status: number; message: string } {
  return { severity, status: pvaStatus(status), message: status ? (ALARM_STATUS_NAMES[status] ?? '') : '' };
}

/** The fields of a PV's normative type made from its metadata (not its state), by the metadata object. */
const metaParts = new WeakMap<Readonly<DbrMetadata>, MetaParts>();

interface MetaParts {
  display: PvStructure;
  /** An enum's. */
  choices?: string[];
  /** A number's. */
  limits?: { control: PvStructure; valueAlarm: PvStructure };
}

/**
 * The PV's state as a value of its normative type. The fields made from the metadata are made
 * once per metadata object (setMetadata replaces it) and shared by every value until then: an
 * update sends the value, alarm and time, and makes only those.
 */
export function ntValueOf(pv: ServedPv): PvStructure {
  const s = pv.state;
  let meta = metaParts.get(pv.metadata);
  if (!meta) metaParts.set(pv.metadata, (meta = metadataOf(pv)));
  const alarm = ntAlarm(s.severity, s.status);
  const timeStamp = { secondsPastEpoch: BigInt(s.secondsPastEpoch), nanoseconds: s.nanoseconds, userTag: 0 };
  if (pv.type === DbrType.ENUM) {
    const index = typeof s.value === 'number' ? s.value : Number((s.value as ArrayLike<number>)[0] ?? 0);
    return { value: { index, choices: meta.choices ?? [] }, alarm, timeStamp, display: meta.display };
  }
  const value = pvValue(s.value, pv.maxCount > 1);
  const l = meta.limits;
  if (!l) return { value, alarm, timeStamp, display: meta.display };
  return { value, alarm, timeStamp, display: meta.display, control: l.control, valueAlarm: l.valueAlarm };
}

/** The fields of the PV's normative type its metadata gives (an enum's choices, display, control, valueAlarm). */
function metadataOf(pv: ServedPv): MetaParts {
  const m = pv.metadata;
  if (pv.type === DbrType.ENUM) return { choices: [...(m.enumStrings ?? [])], display: { description: '' } };
  const el = elementOf(pv);
  if (el === 'string') return { display: { description: '', units: m.units ?? '' } };
  // Limits in the value's type. QSRV gives a waveform's alarm limits as 0 where RSRV gives NaN.
  const big = el === 'long' || el === 'ulong';
  const T = (v: number | undefined): number | bigint => {
    const x = v ?? 0;
    return big ? BigInt(Number.isFinite(x) ? Math.trunc(x) : 0) : x;
  };
  const A = pv.className === 'waveform' ? (v: number | undefined) => T(Number.isNaN(v) ? 0 : v) : T;
  return {
    display: {
      limitLow: T(m.lowerDisplayLimit),
      limitHigh: T(m.upperDisplayLimit),
      description: '',
      units: m.units ?? '',
      precision: m.precision ?? 0,
      form: { index: 0, choices: FORMS },
    },
    limits: {
      control: { limitLow: T(m.lowerControlLimit), limitHigh: T(m.upperControlLimit), minStep: T(0) },
      valueAlarm: {
        active: false,
        lowAlarmLimit: A(m.lowerAlarmLimit),
        lowWarningLimit: A(m.lowerWarningLimit),
        highWarningLimit: A(m.upperWarningLimit),
        highAlarmLimit: A(m.upperAlarmLimit),
        lowAlarmSeverity: 0,
        lowWarningSeverity: 0,
        highWarningSeverity: 0,
        highAlarmSeverity: 0,
        hysteresis: 0,
      },
    },
  };
}

function pvValue(v: ServedValue, array: boolean): PvValue {
  if (!array) return typeof v === 'object' ? ((v as ArrayLike<number | string>)[0] ?? 0) : v;
  if (typeof v === 'number' || typeof v === 'string') return [v] as PvValue;
  return (ArrayBuffer.isView(v) ? v : Array.from(v as ArrayLike<number | string>)) as PvValue;
}

/** A value a client put (the `value` field of the PV's type) in the PV's own form. */
export function valueFromNt(pv: ServedPv, v: PvValue | undefined): ServedValue {
  if (v === undefined) throw new TypeError('no value');
  if (pv.type === DbrType.ENUM) {
    const index = typeof v === 'object' && v !== null && 'index' in v ? Number((v as { index: unknown }).index) : Number(v);
    if (!Number.isInteger(index)) throw new TypeError('an enum takes an index');
    return index;
  }
  if (pv.maxCount > 1) {
    if (ArrayBuffer.isView(v) && pv.type !== DbrType.STRING) {
      const n = (v as Float64Array).length;
      if (n > pv.maxCount) throw new RangeError(`${n} elements exceed ${pv.maxCount}`);
      return (v as Float64Array).slice();
    }
    const list = typeof v === 'object' && v !== null && 'length' in v ? Array.from(v as ArrayLike<number | string | bigint>) : [v];
    if (list.length > pv.maxCount) throw new RangeError(`${list.length} elements exceed ${pv.maxCount}`);
    return pv.type === DbrType.STRING ? list.map(String) : list.map(Number);
  }
  if (pv.type === DbrType.STRING) return String(v);
  const n = typeof v === 'bigint' ? Number(v) : Number(v);
  if (Number.isNaN(n) && typeof v !== 'number') throw new TypeError(`${String(v)} is not a number`);
  return n;
}
