// What the snapshot-file readers and writers share: the one error they throw (naming the file and
// line), line splitting, numbers read from text, times, and a JSON reader and writer of Python's
// dialect (NaN and Infinity allowed, non-ASCII escaped) for the PSI snapshot files.
import { BadArgumentError } from '../../client/errors.js';
import type { SavedValue } from '../types.js';

/** Throws the error every reader and writer reports a bad file or value with: `source line N: message`. */
export function fail(source: string, line: number | undefined, message: string): never {
  throw new BadArgumentError(line === undefined ? `${source}: ${message}` : `${source} line ${line}: ${message}`);
}

/** The lines of a text (LF, CRLF or CR ends; a leading byte-order mark dropped). */
export function splitLines(text: string): string[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/**
 * A number written in decimal (`12`, `-3.5`, `1e-7`), or undefined for anything else (hex,
 * padding, words). An integer beyond Number's exact range stays its decimal string.
 */
export function decimalNumber(text: string): number | string | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) return undefined;
  if (INTEGER.test(text) && !Number.isSafeInteger(n)) return text.replace(/^\+/, '');
  return n;
}

/** A value read as text (autosave): a number when it is written as one, else the text itself. */
export function numberOrText(text: string): number | string {
  const n = decimalNumber(text);
  return n === undefined ? text : n;
}

/** An array whose elements were all read as text: numbers when every one is a number, else the texts. */
export function numbersOrTexts(texts: string[]): number[] | string[] {
  const out: number[] = [];
  for (const t of texts) {
    const n = decimalNumber(t);
    if (typeof n !== 'number') return texts;
    out.push(n);
  }
  return out;
}

/** What kind of value it is, for the writers. */
export function valueKind(value: SavedValue): 'number' | 'string' | 'boolean' | 'number[]' | 'string[]' | 'boolean[]' {
  if (Array.isArray(value)) {
    if (value.length === 0) return 'number[]';
    const first = value[0];
    const kind = typeof first === 'string' ? 'string[]' : typeof first === 'boolean' ? 'boolean[]' : 'number[]';
    return kind;
  }
  return typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'boolean' : 'number';
}

/**
 * The 64-bit integer types (PVA long and ulong): a value of one beyond Number's exact range is
 * kept as its decimal string, and written back as the number it is.
 */
export const INT64_TYPES: ReadonlySet<string> = new Set(['long', 'ulong', 'int64', 'uint64']);

/** A decimal-string 64-bit integer of a 64-bit type (see INT64_TYPES). */
export const isInt64Text = (type: string | undefined, text: string): boolean =>
  type !== undefined && INT64_TYPES.has(type) && /^-?\d+$/.test(text);

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A local time without zone ("2024-12-18T16:42:05.123") from its parts. */
export function localIso(y: number, mo: number, d: number, h: number, mi: number, s: number, ms?: number): string {
  const base = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}`;
  return ms === undefined ? base : `${base}.${pad(ms, 3)}`;
}

/**
 * The calendar parts of a save set's time, as the files (Phoebus, autosave) write them: in local
 * time. A time with no zone is taken as it is written; one with a zone is turned into this
 * machine's local time.
 */
export function timeParts(iso: string, source: string): { y: number; mo: number; d: number; h: number; mi: number; s: number; ms: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(iso);
  if (m) {
    const frac = (m[7] ?? '0').padEnd(3, '0').slice(0, 3);
    return { y: +m[1]!, mo: +m[2]!, d: +m[3]!, h: +m[4]!, mi: +m[5]!, s: +(m[6] ?? 0), ms: +frac };
  }
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) fail(source, undefined, `the save set's time '${iso}' is not an ISO 8601 time`);
  return {
    y: t.getFullYear(),
    mo: t.getMonth() + 1,
    d: t.getDate(),
    h: t.getHours(),
    mi: t.getMinutes(),
    s: t.getSeconds(),
    ms: t.getMilliseconds(),
  };
}

/** An integer written in a big-integer token that did not fit a Number (kept apart until it is known where it goes). */
export class BigIntegerText {
  constructor(readonly text: string) {}
}

/**
 * Reads one JSON value as Python's `json` module writes it: standard JSON plus the bare words
 * NaN, Infinity and -Infinity. An integer beyond Number's exact range comes back as a
 * BigIntegerText. `onError` reports the first fault (it throws); columns are counted from
 * `column0` (where the text starts in its line).
 */
export function parsePythonJson(text: string, onError: (message: string) => never, column0 = 0): unknown {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const bad = (what: string): never =>
    onError(i >= text.length ? `${what} (the text ends too early)` : `${what} at column ${column0 + i + 1}`);
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') bad('expected a quoted key');
        const key = string();
        ws();
        if (text[i] !== ':') bad("expected ':'");
        i++;
        obj[key] = value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        bad("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        bad("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) return bad('expected a value');
    i += m[0].length;
    const n = Number(m[0]);
    if (/^-?\d+$/.test(m[0]) && !Number.isSafeInteger(n)) return new BigIntegerText(m[0]);
    return n;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    if (i >= text.length) bad('a string is not closed');
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      i = start;
      return bad('a bad escape in a string');
    }
  };
  const v = value();
  ws();
  if (i < text.length) bad('unexpected text after the value');
  return v;
}

/** A string as Python's json.dumps writes it (ensure_ascii: every non-ASCII character as \uXXXX). */
export function pythonJsonString(s: string): string {
  return JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A number as Python writes a float or an int (`float` true: a whole number gets ".0"). */
export function pythonJsonNumber(n: number, float: boolean): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  const s = String(n);
  return float && Number.isInteger(n) && !/e/i.test(s) ? `${s}.0` : s;
}

/** A JSON value written with Python's separators (", " and ": ") and escapes. */
export function pythonJson(v: unknown, float = false): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return pythonJsonString(v);
  if (typeof v === 'number') return pythonJsonNumber(v, float);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map((e) => pythonJson(e, float)).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .filter(([, e]) => e !== undefined)
      .map(([k, e]) => `${pythonJsonString(k)}: ${pythonJson(e)}`)
      .join(', ')}}`;
  }
  return 'null';
}
