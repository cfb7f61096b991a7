// Phoebus save-and-restore CSV, as its CSVExporter writes and its CSVImporter reads it: '#'
// comment lines holding the snapshot's name, description, creator, date and tags, then a header
// (PV,SELECTED,TIMESTAMP,STATUS,SEVERITY,VALUE_TYPE,VALUE,READBACK,READBACK_VALUE,DELTA,READ_ONLY
// for a snapshot; PV,READBACK,READ_ONLY for a save set, which lists names only) and one row a PV.
// Values are quoted; arrays are "[1.0;2.0]", an enum "Label~[Label0;Label1]", a time
// "seconds.nanoseconds". Phoebus has no escape for '"' or a line break, splits every value on '~'
// and arrays on ';': a value it would misread is refused when writing.
import { ALARM_STATUS_NAMES } from '../../ca/constants.js';
import type { SavedPv, SavedValue, SaveSet } from '../types.js';
import { decimalNumber, fail, isInt64Text, localIso, splitLines, timeParts, valueKind } from './common.js';

const OPENING_TAG = "AUTO-GENERATED. DON'T EDIT BELOW IF YOU DON'T KNOW HOW THOSE WORK!";
const ENDING_TAG = "AUTO-GENERATED. DON'T EDIT ABOVE IF YOU DON'T KNOW HOW THOSE WORK!";
const TAGS = ['Hierarchy:', 'SaveSet name:', 'Snapshot name:', 'Description:', 'Creator:', 'Date:', 'Tags:', OPENING_TAG, ENDING_TAG];
const SNAPSHOT_COLUMNS = [
  'PV',
  'SELECTED',
  'TIMESTAMP',
  'STATUS',
  'SEVERITY',
  'VALUE_TYPE',
  'VALUE',
  'READBACK',
  'READBACK_VALUE',
  'DELTA',
  'READ_ONLY',
];
const SAVESET_COLUMNS = ['PV', 'READBACK', 'READ_ONLY'];

/** Phoebus's severities (org.epics.vtype.AlarmSeverity); UNDEFINED is read as INVALID. */
const SEVERITIES = ['NONE', 'MINOR', 'MAJOR', 'INVALID'];
/** Phoebus's status categories: only NONE says which EPICS status it was. */
const STATUS_CATEGORIES = new Set(['NONE', 'DEVICE', 'DRIVER', 'RECORD', 'DB', 'CONF', 'UNDEFINED', 'CLIENT']);

const NUMERIC_TYPES = new Set(['double', 'number', 'float', 'long', 'int', 'short', 'byte', 'ubyte', 'ushort', 'uint', 'ulong']);
const FLOAT_TYPES = new Set(['double', 'number', 'float']);
/** The VALUE_TYPE written for a save set's type: Phoebus's importer reads no unsigned type, so these widen. */
const WRITE_TYPE: Record<string, string> = {
  double: 'double',
  float: 'float',
  long: 'long',
  int: 'int',
  short: 'short',
  byte: 'byte',
  char: 'short',
  ubyte: 'short',
  ushort: 'int',
  uint: 'long',
  ulong: 'long',
};

export interface PhoebusCsvOptions {
  /**
   * 'snapshot' (default): values with time, alarm and type, the file Phoebus imports into a save
   * set. 'configuration': the save set itself (PV,READBACK,READ_ONLY), names only.
   */
  form?: 'snapshot' | 'configuration';
  /** The snapshot's (or save set's) name in Phoebus; default "snapshot <time>". */
  name?: string;
}

/** Splits one CSV line: a field in double quotes may hold commas ("" inside is one quote). */
function csvFields(line: string, source: string, lineNo: number): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) fail(source, lineNo, 'a quoted field is not closed');
        field += line.slice(i, q);
        i = q + 1;
        if (line[i] === '"') {
          field += '"';
          i++;
          continue;
        }
        break;
      }
      const next = line.indexOf(',', i);
      field += (next < 0 ? line.slice(i) : line.slice(i, next)).trim();
      out.push(field);
      if (next < 0) return out;
      i = next + 1;
    } else {
      const next = line.indexOf(',', i);
      out.push((next < 0 ? line.slice(i) : line.slice(i, next)).trim());
      if (next < 0) return out;
      i = next + 1;
    }
  }
}

const uncomment = (line: string): string => line.replace(/^#/, '').trim();

/** Java's Double.toString forms and plain decimals; NaN and the infinities too. */
function javaNumber(text: string): number | string | undefined {
  if (text === 'NaN') return NaN;
  if (text === 'Infinity' || text === '+Infinity') return Infinity;
  if (text === '-Infinity') return -Infinity;
  return decimalNumber(text);
}

function parseSeverity(text: string, source: string, lineNo: number): number | undefined {
  if (text === '') return undefined;
  const t = text.toUpperCase().replace(/_ALARM$/, '');
  if (t === 'NO' || t === 'NONE') return 0;
  if (t === 'UNDEFINED') return 3;
  const i = SEVERITIES.indexOf(t);
  if (i < 0) fail(source, lineNo, `unknown SEVERITY '${text}'`);
  return i;
}

function parseStatus(text: string): number | undefined {
  if (text === 'NONE' || text === 'NO_ALARM') return 0;
  if (STATUS_CATEGORIES.has(text)) return undefined;
  const i = (ALARM_STATUS_NAMES as readonly string[]).indexOf(text);
  return i < 0 ? undefined : i;
}

/** "[a;b]" → ['a', 'b'], as Phoebus's importer splits it (the brackets dropped, ';' between). */
function arrayItems(text: string): string[] {
  const inner = text.startsWith('[') ? text.slice(1, -1) : text;
  return inner === '' ? [] : inner.split(';');
}

/** The state names written after '~', or undefined when there are none. */
function enumLabels(text: string): { value: string; labels: string[] | undefined } {
  const t = text.indexOf('~');
  if (t < 0) return { value: text, labels: undefined };
  return { value: text.slice(0, t), labels: arrayItems(text.slice(t + 1)) };
}

/** State names that are only "0", "1", ... were made up by a writer that had none: dropped. */
function realLabels(labels: string[] | undefined): string[] | undefined {
  if (!labels || labels.every((l, i) => l === String(i))) return undefined;
  return labels;
}

function enumIndex(label: string, labels: string[] | undefined, source: string, lineNo: number): number {
  const i = labels ? labels.indexOf(label) : -1;
  if (i >= 0) return i;
  if (/^\d+$/.test(label)) return Number(label);
  return fail(source, lineNo, `enum value '${label}' is none of its states`);
}

function parseNumber(text: string, type: string, source: string, lineNo: number): number | string {
  const n = javaNumber(text);
  if (n === undefined) fail(source, lineNo, `'${text}' is not a number (VALUE_TYPE ${type})`);
  return n;
}

/** The value of a row from its VALUE_TYPE and VALUE, with its type and element count. */
function parseValue(
  vt: string,
  text: string,
  source: string,
  lineNo: number,
): { value: SavedValue; type: string; count: number; enumStrings?: string[] } {
  const array = vt.endsWith('_array');
  const base = array ? vt.slice(0, -'_array'.length) : vt;
  if (base === 'enum') {
    const { value, labels } = enumLabels(text);
    const states = realLabels(labels);
    const out = array
      ? { value: arrayItems(value).map((l) => enumIndex(l, labels, source, lineNo)), type: 'enum', count: 0 }
      : { value: enumIndex(value, labels, source, lineNo), type: 'enum', count: 1 };
    if (Array.isArray(out.value)) out.count = out.value.length;
    return states ? { ...out, enumStrings: states } : out;
  }
  if (array) {
    const items = arrayItems(text);
    if (base === 'string') return { value: items, type: 'string', count: items.length };
    if (base === 'boolean') return { value: items.map((b) => b.toLowerCase() === 'true'), type: 'boolean', count: items.length };
    if (!NUMERIC_TYPES.has(base)) fail(source, lineNo, `unknown VALUE_TYPE '${vt}'`);
    const values = items.map((t) => parseNumber(t, vt, source, lineNo));
    const value = values.every((v) => typeof v === 'number') ? (values as number[]) : values.map(String);
    return { value, type: base, count: items.length };
  }
  if (base === 'string') return { value: text, type: 'string', count: 1 };
  if (base === 'boolean') return { value: text.toLowerCase() === 'true', type: 'boolean', count: 1 };
  if (!NUMERIC_TYPES.has(base)) fail(source, lineNo, `unknown VALUE_TYPE '${vt}'`);
  return { value: parseNumber(text, vt, source, lineNo), type: base, count: 1 };
}

function parseTimestamp(text: string, source: string, lineNo: number): { seconds: number; nanoseconds: number } | undefined {
  if (text === '') return undefined;
  // Phoebus writes getEpochSecond() + "." + getNano(): the part after '.' is whole nanoseconds.
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return fail(source, lineNo, `TIMESTAMP '${text}' is not seconds.nanoseconds`);
  return { seconds: Number(m[1]), nanoseconds: Number(m[2] ?? 0) };
}

/**
 * Reads a Phoebus save-and-restore CSV: a snapshot (values) or a save set (names only; every PV
 * then reads as not ok). The comment block gives the description (meta.comment), creator
 * (meta.user), date (meta.time, local time as written) and tag names (meta.labels).
 */
export function parsePhoebusCsv(text: string, source = 'Phoebus CSV'): SaveSet {
  const lines = splitLines(text);
  const meta: SaveSet['meta'] = { source: 'phoebus-csv' };
  const pvs: SavedPv[] = [];
  let header: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (line.startsWith('#')) {
      const tag = uncomment(line);
      // A tag's value is on the next comment lines (Description and Tags: up to the next tag).
      const following = (): string[] => {
        const out: string[] = [];
        while (i + 1 < lines.length && lines[i + 1]!.startsWith('#') && !TAGS.includes(uncomment(lines[i + 1]!)))
          out.push(uncomment(lines[++i]!));
        return out;
      };
      if (tag === 'Description:') {
        const text = following().join('\n').trim();
        if (text !== '') meta.comment = text;
      } else if (tag === 'Creator:') {
        const user = following()[0];
        if (user) meta.user = user;
      } else if (tag === 'Date:') {
        const at = i + 2;
        const date = following()[0] ?? '';
        const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})$/.exec(date);
        if (!m) fail(source, at, `date '${date}' is not yyyy-MM-dd HH:mm:ss.SSS`);
        meta.time = localIso(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!);
      } else if (tag === 'Tags:') {
        const start = i + 2;
        const labels = following()
          .map((t, k) => csvFields(t, source, start + k)[0] ?? '')
          .filter((l) => l !== '');
        if (labels.length > 0) meta.labels = labels;
      } else if (tag === 'Hierarchy:' || tag === 'Snapshot name:' || tag === 'SaveSet name:') {
        following();
      }
      continue;
    }
    if (line.trim() === '') continue;
    if (!header) {
      header = line.split(',').map((h) => h.trim());
      if (!header.includes('PV')) fail(source, lineNo, `the header '${line}' has no PV column`);
      continue;
    }
    const fields = csvFields(line, source, lineNo);
    if (fields.length !== header.length) fail(source, lineNo, `${fields.length} fields where the header has ${header.length} columns`);
    const row = new Map(header.map((h, k) => [h, fields[k]!]));
    const name = row.get('PV')!;
    if (name === '') fail(source, lineNo, 'no PV name');
    const pv: SavedPv = { name, ok: false };
    const readOnly = (row.get('READ_ONLY') ?? '').toLowerCase();
    const readback = row.get('READBACK') ?? '';
    if (!row.has('VALUE')) {
      pv.error = 'no value: a Phoebus save set lists PV names only';
    } else {
      const vt = row.get('VALUE_TYPE') ?? '';
      const value = row.get('VALUE')!;
      const isString = vt === 'string' || vt === 'string_array';
      if (vt === 'na' || vt === '' || (!isString && (value === '' || value === '---' || value.toLowerCase() === 'null'))) {
        pv.error = 'not connected when saved (no value in the Phoebus snapshot)';
      } else {
        const parsed = parseValue(vt, value, source, lineNo);
        pv.ok = true;
        pv.value = parsed.value;
        pv.type = parsed.type;
        pv.count = parsed.count;
        if (parsed.enumStrings) pv.enumStrings = parsed.enumStrings;
        const severity = parseSeverity(row.get('SEVERITY') ?? '', source, lineNo);
        if (severity !== undefined) pv.severity = severity;
        const status = parseStatus(row.get('STATUS') ?? '');
        if (status !== undefined) pv.status = status;
        const time = parseTimestamp(row.get('TIMESTAMP') ?? '', source, lineNo);
        if (time) {
          pv.seconds = time.seconds;
          pv.nanoseconds = time.nanoseconds;
        }
      }
    }
    if (readOnly === 'true' || readOnly === '1') pv.readOnly = true;
    if (readback !== '') pv.readbackName = readback;
    pvs.push(pv);
  }
  if (!header) fail(source, undefined, 'no header line (PV,...) and no rows');
  return { meta, pvs };
}

/** Text Phoebus would read back as it is: no quote, line break, and none of `extra`. */
function checked(text: string, what: string, extra: string, source: string): string {
  for (const c of `"\r\n${extra}`) {
    if (text.includes(c)) {
      const shown = c === '\r' || c === '\n' ? 'a line break' : `'${c}'`;
      fail(source, undefined, `${what} holds ${shown}, which Phoebus's CSV import cannot read back`);
    }
  }
  return text;
}

function enumText(pv: SavedPv, index: number, source: string): string {
  const labels = pv.enumStrings ?? [];
  const label = labels[index];
  for (const l of labels) checked(l, `PV ${pv.name}: the state name '${l}'`, ';~', source);
  // The name when it finds this index again; else the index, which Phoebus takes when no name matches.
  if (label !== undefined && label !== '' && labels.indexOf(label) === index) return label;
  if (labels.includes(String(index)))
    fail(source, undefined, `PV ${pv.name}: enum index ${index} cannot be written (a state is named '${index}')`);
  return String(index);
}

function enumLabelList(pv: SavedPv, max: number): string {
  const labels = pv.enumStrings && pv.enumStrings.length > 0 ? pv.enumStrings : Array.from({ length: max + 1 }, (_, i) => String(i));
  return `[${labels.join(';')}]`;
}

/** VALUE_TYPE and VALUE of an answered PV. */
function valueColumns(pv: SavedPv, source: string): [string, string] {
  const value = pv.value!;
  const kind = valueKind(value);
  const type = pv.type ?? '';
  const what = `PV ${pv.name}: the value`;
  const isEnum = (type === 'enum' || pv.enumStrings !== undefined) && (kind === 'number' || kind === 'number[]');
  if (isEnum) {
    if (typeof value === 'number') return ['enum', `${enumText(pv, value, source)}~${enumLabelList(pv, value)}`];
    const items = value as number[];
    return ['enum_array', `[${items.map((i) => enumText(pv, i, source)).join(';')}]~${enumLabelList(pv, Math.max(0, ...items))}`];
  }
  let numeric = WRITE_TYPE[type];
  // An integer type with a fraction (or NaN) in it would not parse in Phoebus: written as double.
  const whole = (n: number): boolean => Number.isInteger(n);
  if (numeric && !FLOAT_TYPES.has(numeric) && typeof value !== 'string') {
    if ((kind === 'number' && !whole(value as number)) || (kind === 'number[]' && !(value as number[]).every(whole))) numeric = 'double';
  }
  switch (kind) {
    case 'number':
      return [numeric ?? 'double', String(value)];
    case 'boolean':
      return ['boolean', String(value)];
    case 'string': {
      // A 64-bit integer kept as its decimal string stays a number of its type.
      if (numeric && isInt64Text(type, value as string)) return [numeric, value as string];
      const s = checked(value as string, what, '~', source);
      if (s.startsWith('[')) fail(source, undefined, `${what} starts with '[', which Phoebus's CSV import strips`);
      return ['string', s];
    }
    case 'number[]':
      return [`${numeric ?? 'double'}_array`, `[${(value as number[]).map(String).join(';')}]`];
    case 'boolean[]':
      return ['boolean_array', `[${(value as boolean[]).map(String).join(';')}]`];
    case 'string[]': {
      const items = value as string[];
      if (numeric && items.length > 0 && items.every((s) => isInt64Text(type, s))) return [`${numeric}_array`, `[${items.join(';')}]`];
      for (const s of items) checked(s, `PV ${pv.name}: the element '${s}'`, ';~', source);
      return ['string_array', `[${items.join(';')}]`];
    }
  }
}

const SEVERITY_OUT = ['NONE', 'MINOR', 'MAJOR', 'INVALID'];

/**
 * Writes a save set as a Phoebus save-and-restore CSV (the snapshot form by default; the
 * configuration form lists names only). A not-connected PV is written with VALUE_TYPE "na" and
 * no value ("---"), which Phoebus imports as disconnected. A value Phoebus's import would read
 * differently (a '"' or line break anywhere, '~' in a string, ';' in an array element or state
 * name, a string starting with '[') throws BadArgumentError rather than being written.
 */
export function writePhoebusCsv(set: SaveSet, options: PhoebusCsvOptions = {}): string {
  const source = 'Phoebus CSV';
  const form = options.form ?? 'snapshot';
  const t = timeParts(set.meta.time ?? new Date().toISOString(), source);
  const date = `${localIso(t.y, t.mo, t.d, t.h, t.mi, t.s).replace('T', ' ')}.${String(t.ms).padStart(3, '0')}`;
  const name = checked(options.name ?? `snapshot ${date}`, 'the name', '', source);
  const comment = (text: string): string => `# ${text}`;
  const out: string[] = [comment(OPENING_TAG), comment('Hierarchy:'), comment(name)];
  out.push(comment(form === 'snapshot' ? 'Snapshot name:' : 'SaveSet name:'), comment(name));
  out.push(comment('Description:'));
  for (const l of (set.meta.comment ?? '').split(/\r\n|\n|\r/)) {
    if (TAGS.includes(l.trim())) fail(source, undefined, `the description line '${l}' would be read as a section of the file`);
    out.push(comment(l));
  }
  if (form === 'snapshot') {
    const user = checked(set.meta.user ?? '', 'the user', ',', source);
    out.push(comment('Creator:'), comment(user), comment('Date:'), comment(date), comment('Tags:'));
    for (const label of set.meta.labels ?? [])
      out.push(comment(`"${checked(label, `the label '${label}'`, '', source)}","",${user},${date}`));
  }
  out.push(comment(ENDING_TAG));
  out.push((form === 'snapshot' ? SNAPSHOT_COLUMNS : SAVESET_COLUMNS).join(','));
  for (const pv of set.pvs) {
    const pvName = checked(pv.name, `the PV name '${pv.name}'`, ',', source);
    if (pvName === '' || pvName.startsWith('#')) fail(source, undefined, `the PV name '${pv.name}' cannot start a CSV row`);
    const readback = checked(pv.readbackName ?? '', `PV ${pv.name}: the readback name`, ',', source);
    const readOnly = pv.readOnly ? '1' : '0';
    if (form === 'configuration') {
      out.push([pvName, readback, readOnly].join(','));
      continue;
    }
    if (!pv.ok || pv.value === undefined) {
      out.push([pvName, '1', '', '', '', 'na', '"---"', readback, '"---"', '', readOnly].join(','));
      continue;
    }
    const [type, value] = valueColumns(pv, source);
    const time = pv.seconds !== undefined ? `${pv.seconds}.${pv.nanoseconds ?? 0}` : '';
    const status = pv.status === undefined ? '' : pv.status === 0 ? 'NONE' : (ALARM_STATUS_NAMES[pv.status] ?? '');
    const severity = pv.severity === undefined ? '' : (SEVERITY_OUT[pv.severity] ?? 'INVALID');
    out.push([pvName, '1', time, status, severity, type, `"${value}"`, readback, '"---"', '', readOnly].join(','));
  }
  return `${out.join('\n')}\n`;
}
