// A served PV as PV Access sees it: NTScalar, NTScalarArray or NTEnum with alarm, timeStamp,
// display and control, the type made once per PV shape, the value made from the PV's state.
import { DbrType } from '../../ca/constants.js';
import { scalar, scalarArray, structure, type ScalarType, type StructureDesc } from '../../pva/types.js';
import type { PvStructure, PvValue } from '../../pva/values.js';
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

const ALARM = structure('alarm_t', { severity: scalar('int'), status: scalar('int'), message: scalar('string') });
const TIME = structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int'), userTag: scalar('int') });
const DISPLAY = structure('display_t', {
  limitLow: scalar('double'),
  limitHigh: scalar('double'),
  description: scalar('string'),
  units: scalar('string'),
  precision: scalar('int'),
});
const CONTROL = structure('control_t', { limitLow: scalar('double'), limitHigh: scalar('double'), minStep: scalar('double') });

const types = new Map<string, StructureDesc>();

/** The PV's normative type: NTEnum for enums, NTScalarArray for arrays, else NTScalar. */
export function ntTypeOf(pv: ServedPv): StructureDesc {
  const key = pv.type === DbrType.ENUM ? 'enum' : `${pv.type}:${pv.maxCount > 1 ? 'a' : 's'}`;
  let t = types.get(key);
  if (!t) {
    if (pv.type === DbrType.ENUM)
      t = structure('epics:nt/NTEnum:1.0', {
        value: structure('enum_t', { index: scalar('int'), choices: scalarArray('string') }),
        alarm: ALARM,
        timeStamp: TIME,
      });
    else {
      const el = ELEMENT[pv.type] ?? 'double';
      const array = pv.maxCount > 1;
      t = structure(array ? 'epics:nt/NTScalarArray:1.0' : 'epics:nt/NTScalar:1.0', {
        value: array ? scalarArray(el) : scalar(el),
        alarm: ALARM,
        timeStamp: TIME,
        display: DISPLAY,
        control: CONTROL,
      });
    }
    types.set(key, t);
  }
  return t;
}

/** The PV's state as a value of its normative type. */
export function ntValueOf(pv: ServedPv): PvStructure {
  const s = pv.state;
  const m = pv.metadata;
  const alarm = { severity: s.severity, status: s.status, message: '' };
  const timeStamp = { secondsPastEpoch: BigInt(s.secondsPastEpoch), nanoseconds: s.nanoseconds, userTag: 0 };
  if (pv.type === DbrType.ENUM) {
    const index = typeof s.value === 'number' ? s.value : Number((s.value as ArrayLike<number>)[0] ?? 0);
    return { value: { index, choices: [...(m.enumStrings ?? [])] }, alarm, timeStamp };
  }
  return {
    value: pvValue(s.value, pv.maxCount > 1),
    alarm,
    timeStamp,
    display: {
      limitLow: m.lowerDisplayLimit ?? 0,
      limitHigh: m.upperDisplayLimit ?? 0,
      description: '',
      units: m.units ?? '',
      precision: m.precision ?? 0,
    },
    control: { limitLow: m.lowerControlLimit ?? 0, limitHigh: m.upperControlLimit ?? 0, minStep: 0 },
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
    const list = typeof v === 'object' && v !== null && 'length' in v ? Array.from(v as ArrayLike<number | string | bigint>) : [v];
    if (list.length > pv.maxCount) throw new RangeError(`${list.length} elements exceed ${pv.maxCount}`);
    return pv.type === DbrType.STRING ? list.map(String) : list.map(Number);
  }
  if (pv.type === DbrType.STRING) return String(v);
  const n = typeof v === 'bigint' ? Number(v) : Number(v);
  if (Number.isNaN(n) && typeof v !== 'number') throw new TypeError(`${String(v)} is not a number`);
  return n;
}
