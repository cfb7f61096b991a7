// EPICS autosave (synApps): the .sav files save_restore writes and the .req request files that
// list what it saves. A .sav file: a header comment, an optional "! N channel(s) not connected"
// line, one `NAME VALUE` line a PV (the value C-escaped; an enum as its index; an array as
// `NAME @array@ { "1" "2" }`), `#NAME VALUE` for a PV it could not read, and `<END>` last: a file
// without it is incomplete and autosave does not restore from it. A .req file: PV names, one a
// line, with $(MACRO) substitution, '#' comments and `file other.req A=1,B=2` includes.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { SavedPv, SaveSet } from '../types.js';
import { fail, localIso, numberOrText, numbersOrTexts, splitLines, timeParts, valueKind } from './common.js';

const ARRAY_MARKER = '@array@';

/** What autosave's dbrestore.c takes as a PV line: a name starting with a letter or digit. */
const isPvStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9]/.test(c);
/** Request files' rule (save_restore.c isValid1stPVChar). */
const isReqPvStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_\-+:[\]<>;$]/.test(c);

/** Undoes epicsStrPrintEscaped / epicsStrnEscapedFromRaw: C escapes, \xNN as UTF-8 bytes. */
function unescapeC(text: string): string {
  if (!text.includes('\\')) return text;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  const put = (s: string): void => {
    for (const b of enc.encode(s)) bytes.push(b);
  };
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '0': '\0' };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\' || i + 1 >= text.length) {
      put(c);
      continue;
    }
    const e = text[++i]!;
    if (e === 'x' && /[0-9a-fA-F]/.test(text[i + 1] ?? '')) {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 1))![0];
      bytes.push(parseInt(hex, 16));
      i += hex.length;
    } else {
      put(simple[e] ?? e);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** epicsStrPrintEscaped: C escapes, and every byte that is not printable ASCII as \xNN. */
function escapeC(text: string): string {
  const named: Record<string, string> = {
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
  let out = '';
  for (const c of text) {
    if (named[c]) out += named[c];
    else if (c >= ' ' && c <= '~') out += c;
    else for (const b of new TextEncoder().encode(c)) out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * The elements of an `@array@ { "a" "b" }` value, reading on over the following lines until its
 * '}' (autosave lets an array run over several lines). Returns the elements and the index of
 * the last line used.
 */
function readArray(lines: string[], at: number, first: string, source: string): { items: string[]; last: number } {
  let text = first.slice(first.indexOf(ARRAY_MARKER) + ARRAY_MARKER.length);
  let last = at;
  const items: string[] = [];
  let i = text.indexOf('{');
  while (i < 0) {
    if (last + 1 >= lines.length) fail(source, at + 1, "an @array@ value with no '{'");
    text += `\n${lines[++last]!}`;
    i = text.indexOf('{');
  }
  i++;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) {
      if (last + 1 >= lines.length) fail(source, at + 1, "an @array@ value is not closed with '}'");
      text += `\n${lines[++last]!}`;
      continue;
    }
    const c = text[i]!;
    if (c === '}') return { items, last };
    if (c !== '"') fail(source, last + 1, `unexpected '${c}' in an @array@ value (elements are quoted)`);
    let raw = '';
    i++;
    for (;;) {
      if (i >= text.length) {
        if (last + 1 >= lines.length) fail(source, at + 1, 'an @array@ element is not closed');
        text += `\n${lines[++last]!}`;
        continue;
      }
      const e = text[i]!;
      if (e === '\\' && i + 1 < text.length) {
        raw += text.slice(i, i + 2);
        i += 2;
      } else if (e === '"') {
        i++;
        break;
      } else {
        raw += e;
        i++;
      }
    }
    items.push(unescapeC(raw));
  }
}

/** `NAME<one character>VALUE`, as dbrestore.c's sscanf("%80s%c%[^\n\r]") splits a line. */
function splitNameValue(line: string): { name: string; value: string } {
  const m = /^\s*(\S+)([\s\S]?)([\s\S]*)$/.exec(line)!;
  return { name: m[1]!, value: m[3]! };
}

/**
 * Reads an autosave .sav file. A value that is a decimal number is read as a number, any other as
 * its text (an enum is saved as its index; a link or a CALC expression stays text); an @array@ is
 * numbers when every element is one, else texts. A `#NAME ...` line (a PV autosave could not
 * read) is a PV that is not ok. The header's date is meta.time (local time, as written) and a
 * "! N channel(s) not connected" line meta.comment. A file without `<END>` throws: autosave
 * treats it as incomplete.
 */
export function parseAutosaveSav(text: string, source = 'autosave file'): SaveSet {
  const lines = splitLines(text);
  const meta: SaveSet['meta'] = { source: 'autosave-sav' };
  const pvs: SavedPv[] = [];
  const notes: string[] = [];
  let ended = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (line.trim() === '') continue;
    const { name, value } = splitNameValue(line);
    if (i === 0 && name === '#') {
      const m = /Automatically generated.*- (\d{2})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})\s*$/.exec(line);
      if (m) meta.time = localIso(2000 + +m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
      continue;
    }
    if (name.startsWith('<')) {
      if (name.startsWith('<END>')) {
        ended = true;
        break;
      }
      fail(source, lineNo, `unexpected '${name}' (autosave ends the file at any line starting with '<')`);
    }
    if (name.startsWith('!')) {
      notes.push(line.trim().replace(/^!\s*/, ''));
      continue;
    }
    const isArray = value.startsWith(ARRAY_MARKER);
    if (name.startsWith('#')) {
      // '#' + a PV name: autosave could not read that PV when it saved (or a line commented out).
      let shown = value;
      if (isArray) {
        const { last } = readArray(lines, i, value, source);
        i = last;
        shown = '';
      }
      if (isPvStart(name[1])) {
        pvs.push({
          name: name.slice(1),
          ok: false,
          error: `autosave could not read it when saving${shown.trim() ? ` (it wrote '${shown.trim()}')` : ''}`,
        });
      }
      continue;
    }
    if (!isPvStart(name[0])) fail(source, lineNo, `'${name}' is not a PV name (autosave's start with a letter or digit)`);
    if (isArray) {
      const { items, last } = readArray(lines, i, value, source);
      i = last;
      const v = numbersOrTexts(items);
      pvs.push({ name, ok: true, value: v, count: v.length });
    } else {
      pvs.push({ name, ok: true, value: numberOrText(unescapeC(value)), count: 1 });
    }
  }
  if (!ended) {
    fail(source, Math.max(lines.length, 1), 'no <END> line: the file is incomplete (autosave does not restore from it)');
  }
  if (notes.length > 0) meta.comment = notes.join('; ');
  return { meta, pvs };
}

/** A number as autosave writes it (C's %g spells NaN and the infinities "nan", "inf", "-inf"). */
function cNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return String(n);
}

/**
 * Writes a save set as an autosave .sav file autosave can restore from at boot: the header (its
 * date from meta.time, local time), a "! N channel(s) not connected" line when some PV has no
 * value, `NAME VALUE` a PV (a boolean as 1 or 0, an enum as its index), `#NAME Not Connected`
 * for a PV with no value, `@array@ { ... }` for an array, and `<END>`. A name autosave would not
 * read back (white space, or not starting with a letter or digit) throws BadArgumentError.
 */
export function writeAutosaveSav(set: SaveSet): string {
  const source = 'autosave file';
  const t = timeParts(set.meta.time ?? new Date().toISOString(), source);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const date = `${p2(t.y % 100)}${p2(t.mo)}${p2(t.d)}-${p2(t.h)}${p2(t.mi)}${p2(t.s)}`;
  const out = [`# autosave R5.3\tAutomatically generated - DO NOT MODIFY - ${date}`];
  const missing = set.pvs.filter((pv) => !pv.ok || pv.value === undefined).length;
  if (missing > 0) out.push(`! ${missing} channel(s) not connected - or not all gets were successful`);
  for (const pv of set.pvs) {
    if (!isPvStart(pv.name[0]) || /\s/.test(pv.name))
      fail(
        source,
        undefined,
        `the PV name '${pv.name}' cannot be written (autosave reads names starting with a letter or digit, without spaces)`,
      );
    if (!pv.ok || pv.value === undefined) {
      out.push(`#${pv.name} Not Connected`);
      continue;
    }
    const v = pv.value;
    const kind = valueKind(v);
    const scalar = (e: number | string | boolean): string =>
      typeof e === 'number' ? cNumber(e) : typeof e === 'boolean' ? (e ? '1' : '0') : e;
    if (Array.isArray(v)) {
      const elements = (v as (number | string | boolean)[]).map((e) => {
        const s = scalar(e)
          .replace(/[\\"]/g, (c) => `\\${c}`)
          .replace(/\n/g, '\\n')
          .replace(/\r/g, '\\r');
        return `"${s}" `;
      });
      out.push(`${pv.name} ${ARRAY_MARKER} { ${elements.join('')}}`);
    } else {
      out.push(`${pv.name} ${kind === 'string' ? escapeC(v as string) : scalar(v as number | boolean)}`);
    }
  }
  out.push('<END>');
  return `${out.join('\n')}\n`;
}

export interface AutosaveReqOptions {
  /** Macros for the top file (as create_xxx_set's macro string gives them). */
  macros?: Record<string, string>;
  /** Reads a file's text; throws when there is none (default: node:fs readFileSync, UTF-8). */
  readFile?: (path: string) => string;
  /** Folders an included file is looked for in after the including file's own (set_requestfile_path). */
  searchPath?: string[];
}

/**
 * Expands $(NAME), ${NAME} and $(NAME=default) as EPICS macLib does: a value may itself refer
 * to macros, and a name may be built of them. An undefined macro with no default, or one that
 * refers to itself, is reported through `bad`.
 */
export function expandMacros(text: string, macros: Record<string, string>, bad: (message: string) => never, active: string[] = []): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const open = text[i + 1];
    if (c !== '$' || (open !== '(' && open !== '{')) {
      out += c;
      i++;
      continue;
    }
    const close = open === '(' ? ')' : '}';
    // Find the matching close, nested references included.
    let depth = 0;
    let j = i + 1;
    for (; j < text.length; j++) {
      if (text[j] === '(' || text[j] === '{') depth++;
      else if (text[j] === ')' || text[j] === '}') {
        depth--;
        if (depth === 0) break;
      }
    }
    if (j >= text.length || text[j] !== close) bad(`a macro reference is not closed: '${text.slice(i)}'`);
    const body = text.slice(i + 2, j);
    const eq = body.indexOf('=');
    const name = expandMacros(eq < 0 ? body : body.slice(0, eq), macros, bad, active);
    const fallback = eq < 0 ? undefined : body.slice(eq + 1);
    if (active.includes(name)) bad(`macro ${name} refers to itself (${[...active, name].join(' > ')})`);
    const value = Object.hasOwn(macros, name) ? macros[name]! : fallback;
    if (value === undefined) bad(`undefined macro ${name}`);
    out += expandMacros(value, macros, bad, [...active, name]);
    i = j + 1;
  }
  return out;
}

/** "A=1,B=2" (commas or spaces between, quotes dropped, as autosave reads a `file` line) as macros. */
function parseDefinitions(text: string, bad: (message: string) => never): Record<string, string> {
  const out: Record<string, string> = {};
  for (const def of text.replace(/"/g, '').split(/[\s,]+/)) {
    if (def === '') continue;
    const eq = def.indexOf('=');
    if (eq <= 0) bad(`'${def}' is not a macro definition NAME=VALUE`);
    out[def.slice(0, eq)] = def.slice(eq + 1);
  }
  return out;
}

/**
 * The PV names an autosave request file lists, includes followed, in file order. Lines are PV
 * names (the first word; the rest of the line is ignored), '#' starts a comment line, and
 * `file name.req A=1,B=2` includes another file with those macros (only those: autosave gives
 * an included file the macros of its `file` line, which may pass the includer's on, as in
 * `P=$(P)`). An included file is looked for in the including file's folder, then in each of
 * `searchPath`. A missing file, an include cycle or an undefined macro throws BadArgumentError
 * naming the file and line.
 */
export function parseAutosaveReq(path: string, options: AutosaveReqOptions = {}): string[] {
  const readFile = options.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const searchPath = options.searchPath ?? [];
  const out: string[] = [];
  const read = (file: string): string | undefined => {
    try {
      return readFile(file);
    } catch {
      return undefined;
    }
  };
  const visit = (file: string, text: string, macros: Record<string, string>, chain: string[]): void => {
    const lines = splitLines(text);
    for (let i = 0; i < lines.length; i++) {
      const bad: (message: string) => never = (message) => fail(file, i + 1, message);
      const trimmed = lines[i]!.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const line = expandMacros(trimmed, macros, bad).trim();
      // A macro may comment a line out: autosave looks for '#' after expanding.
      if (line === '' || line.startsWith('#')) continue;
      const include = /^file(?=\s|"|$)\s*"?\s*([^\s"#]*)"?(.*)$/.exec(line);
      if (include) {
        const name = include[1]!;
        if (name === '') bad("a 'file' line with no file name");
        const defs = parseDefinitions(include[2]!, bad);
        const candidates = isAbsolute(name) ? [name] : [join(dirname(file), name), ...searchPath.map((d) => join(d, name))];
        let found: string | undefined;
        let content: string | undefined;
        for (const c of candidates) {
          content = read(c);
          if (content !== undefined) {
            found = normalize(c);
            break;
          }
        }
        if (found === undefined || content === undefined) bad(`included file '${name}' not found (looked for ${candidates.join(', ')})`);
        if (chain.includes(found)) bad(`include cycle: ${[...chain, found].join(' > ')}`);
        visit(found, content, defs, [...chain, found]);
        continue;
      }
      const pv = line.split(/\s+/)[0]!;
      // Lines autosave takes for neither a PV nor an include it skips; so does this.
      if (isReqPvStart(pv[0])) out.push(pv);
    }
  };
  const top = normalize(path);
  let text: string;
  try {
    text = readFile(top);
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return fail(path, undefined, `cannot read the request file (${why})`);
  }
  visit(top, text, options.macros ?? {}, [top]);
  return out;
}
