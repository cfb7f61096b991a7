// How `ca` prints readings, in the layouts of EPICS base's caget, camonitor and cainfo:
// C's %g for floats, escaped strings, local timestamps with microseconds, the -d blocks.
import { ALARM_STATUS_NAMES, NATIVE_TYPE_NAMES, SEVERITY_NAMES } from 'epics-client/ca';
import type { DbrMetadata, Reading, ChannelInfo } from 'epics-client';

/** A number as C's printf("%g") prints it (6 significant digits, trailing zeros dropped). */
export function fmtG(x: number, precision = 6): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const p = Math.max(1, precision);
  const [mant, expText] = x.toExponential(p - 1).split('e') as [string, string];
  const exp = Number(expText);
  const strip = (s: string): string => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);
  if (exp < -4 || exp >= p) return `${strip(mant)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return strip(x.toFixed(p - 1 - exp));
}

const ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
};

/** A string with control characters escaped, as the C tools print strings. */
export function escapeText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it escapes
  return s.replace(/[\x00-\x1f\x7f\\'"]/g, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** One element as text. */
function elementText(v: number | string): string {
  if (typeof v === 'string') return escapeText(v);
  return Number.isInteger(v) ? String(v) : fmtG(v);
}

/** A DBR_CHAR as the C tools print it: through C's `char`, signed on Linux (200 prints as -56). */
const signedChar = (x: number): number => (x << 24) >> 24;

/** The elements of a reading as text (a float's integral values still print as %g does; chars signed). */
export function valueTexts(r: Reading, floating: boolean): string[] {
  const v = r.value;
  if (typeof v === 'string') return [escapeText(v)];
  const char = r.dbrType % 7 === 4;
  if (typeof v === 'number') return [floating ? fmtG(v) : elementText(char ? signedChar(v) : v)];
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    out.push(typeof x === 'number' && floating ? fmtG(x) : elementText(typeof x === 'number' && char ? signedChar(x) : x));
  }
  return out;
}

/** True when the reading came as a float or double (printed with %g). */
export function isFloating(r: Reading): boolean {
  const native = r.dbrType % 7;
  return native === 2 || native === 6;
}

/** Local time as the C tools print it: `%Y-%m-%d %H:%M:%S.%06f`, the microseconds rounded as epicsTime rounds them (never up to the next second). */
export function timeText(d: Date, nanoseconds?: number): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const micros = nanoseconds === undefined ? d.getMilliseconds() * 1000 : Math.floor(Math.min(nanoseconds + 500, 999_999_999) / 1000);
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(micros, 6)}`;
}

export const statusName = (s: number | undefined): string => ALARM_STATUS_NAMES[s ?? 0] ?? String(s);
export const severityName = (s: number | undefined): string => SEVERITY_NAMES[s ?? 0] ?? String(s);

export interface LineStyle {
  /** Field separator (caget -F); a space pads a scalar's name to 30 columns (nameColumn). */
  separator: string;
  /** Print the element count before the values (an array, or a count was asked for). */
  withCount: boolean;
  /** A CHAR array as one string (-S). */
  charAsString: boolean;
}

/** The value part of a line: count and elements, or a long string. */
export function valuePart(r: Reading, style: LineStyle): string {
  const sep = style.separator;
  if (typeof r.value === 'string' && style.charAsString) return escapeText(r.value);
  const texts = valueTexts(r, isFloating(r));
  return (style.withCount ? `${r.count}${sep}` : '') + texts.join(sep);
}

/** The name column: a scalar's name (`count` at most 1, even with -#) padded to 30 columns when the separator is a space, as caget pads it. */
export function nameColumn(name: string, count: number, style: LineStyle): string {
  return (count <= 1 && style.separator === ' ' ? name.padEnd(30) : name) + style.separator;
}

/** camonitor's and caget -a's wide line without the name: timestamp, value, status and severity. */
export function wideTail(r: Reading, stamp: string, style: LineStyle): string {
  const sep = style.separator;
  const alarm = r.status || r.severity ? `${sep}${statusName(r.status)}${sep}${severityName(r.severity)}` : `${sep}${sep}`;
  return `${stamp}${sep}${valuePart(r, style)}${alarm}`;
}

const DBR_FORM_TEXT = ['', 'STS_', 'TIME_', 'GR_', 'CTRL_'];

/** EPICS's name of a DBR type id: DBR_TIME_DOUBLE. */
export function dbrTypeText(id: number): string {
  return `DBR_${DBR_FORM_TEXT[(id / 7) | 0]}${NATIVE_TYPE_NAMES[id % 7]!.toUpperCase()}`;
}

/** Parse caget's -d argument: a number, or a name with or without DBR_ (INT means SHORT). */
export function parseDbrType(text: string): number | undefined {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n <= 34 ? n : undefined;
  }
  const name = text
    .toUpperCase()
    .replace(/^DBR_/, '')
    .replace(/(^|_)INT$/, '$1SHORT');
  for (let id = 0; id <= 34; id++) if (dbrTypeText(id) === `DBR_${name}`) return id;
  return undefined;
}

function limitLines(m: DbrMetadata, floating: boolean, ctrl: boolean, char: boolean): string[] {
  const f = (x: number | undefined): string => (floating ? fmtG(x ?? 0) : String(char ? signedChar(x ?? 0) : (x ?? 0)).padStart(8));
  const lines = [
    `    Lo disp limit:    ${f(m.lowerDisplayLimit)}`,
    `    Hi disp limit:    ${f(m.upperDisplayLimit)}`,
    `    Lo alarm limit:   ${f(m.lowerAlarmLimit)}`,
    `    Lo warn limit:    ${f(m.lowerWarningLimit)}`,
    `    Hi warn limit:    ${f(m.upperWarningLimit)}`,
    `    Hi alarm limit:   ${f(m.upperAlarmLimit)}`,
  ];
  if (ctrl) lines.push(`    Lo ctrl limit:    ${f(m.lowerControlLimit)}`, `    Hi ctrl limit:    ${f(m.upperControlLimit)}`);
  return lines;
}

/** caget -d: the block of a reading of an explicitly requested DBR type. */
export function dbrBlock(name: string, info: ChannelInfo, r: Reading, style: LineStyle, enumAsText: boolean): string {
  const id = r.dbrType;
  const form = (id / 7) | 0;
  const native = id % 7;
  const states = r.metadata?.enumStrings;
  // An enum's GR and CTRL forms carry its states: the value prints as its state (unless -n).
  const value =
    native === 3 && states && enumAsText && typeof r.value === 'number'
      ? (states[r.value] ?? `Enum Index Overflow (${r.value})`)
      : valuePart(r, { ...style, withCount: false });
  const lines = [
    name,
    `    Native data type: ${info.dbfType}`,
    `    Request type:     ${dbrTypeText(id)}`,
    `    Element count:    ${r.count}`,
    `    Value:            ${value}`,
  ];
  const sts = [`    Status:           ${statusName(r.status)}`, `    Severity:         ${severityName(r.severity)}`];
  if (form === 2) lines.push(`    Timestamp:        ${timeText(r.timestamp!, r.nanoseconds)}`, ...sts);
  else if (form === 1 || (form >= 3 && native === 0)) lines.push(...sts);
  else if (form >= 3 && native === 3) {
    const all = states ?? [];
    lines.push(...sts, `    Enums:            (${String(all.length).padStart(2)})`);
    all.forEach((s, i) => lines.push(`                      [${String(i).padStart(2)}] ${s}`));
  } else if (form >= 3) {
    const m = r.metadata ?? {};
    const floating = native === 2 || native === 6;
    lines.push(...sts, `    Units:            ${m.units ?? ''}`);
    if (floating) lines.push(`    Precision:        ${m.precision ?? 0}`);
    lines.push(...limitLines(m, floating, form === 4, native === 4));
  }
  return lines.join('\n') + '\n';
}

/** cainfo's block. */
export function infoBlock(info: ChannelInfo): string {
  const no = (b: boolean): string => (b ? '' : 'no ');
  return (
    [
      info.name,
      '    State:            connected',
      `    Host:             ${info.server}`,
      `    Access:           ${no(info.readAccess)}read, ${no(info.writeAccess)}write`,
      `    Native data type: ${info.dbfType}`,
      `    Request type:     DBR_${info.nativeType.toUpperCase()}`,
      `    Element count:    ${info.elementCount}`,
    ].join('\n') + '\n'
  );
}
