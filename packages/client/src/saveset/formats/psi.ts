// PSI snapshot's .snap files (paulscherrerinstitute/snapshot, snapshot/parser.py): a first '#'
// line of JSON metadata (labels, comment, machine_params, save_time, req_file_name, macros), then
// one line a PV: `NAME,{"val": <json>}` (written since 2020; 2020-2022 also "egu" and "prec"),
// the older `NAME,<json>`, or `NAME` alone for a PV that gave no value. Values are Python's
// json.dumps: numbers (NaN and Infinity bare), strings, lists for arrays, an enum as its index.
import type { SavedPv, SavedValue, SaveSet } from '../types.js';
import { BigIntegerText, fail, isInt64Text, parsePythonJson, pythonJson, pythonJsonString, splitLines, valueKind } from './common.js';

const FLOAT_TYPES = new Set(['double', 'float']);

/** A JSON value of a PV as a saved value; undefined for null (no value). */
function savedValue(v: unknown, bad: (message: string) => never): SavedValue | undefined | 'nested' {
  if (v === null) return undefined;
  if (v instanceof BigIntegerText) return v.text;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) {
    if (v.some((e) => Array.isArray(e))) return 'nested';
    if (v.every((e) => typeof e === 'number')) return v as number[];
    if (v.every((e) => typeof e === 'number' || e instanceof BigIntegerText))
      return v.map((e) => (e instanceof BigIntegerText ? e.text : String(e)));
    if (v.every((e) => typeof e === 'string')) return v as string[];
    if (v.every((e) => typeof e === 'boolean')) return v as boolean[];
    return bad('an array mixes kinds of values');
  }
  return bad('the value is neither a number, a string nor an array');
}

/**
 * Reads a PSI snapshot .snap file. The metadata's comment and labels (or the oldest files'
 * comma-separated "keywords") become meta.comment and meta.labels, save_time meta.time; a PV's
 * `$(MACRO)` is replaced from the metadata's macros, as PSI snapshot does when it restores. A
 * PV written with no value reads as not ok.
 */
export function parsePsiSnap(text: string, source = 'PSI snapshot'): SaveSet {
  const lines = splitLines(text);
  const meta: SaveSet['meta'] = { source: 'psi-snap' };
  let macros: Record<string, string> = {};
  let metaLoaded = false;
  const byName = new Map<string, number>();
  const pvs: SavedPv[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    const bad: (message: string) => never = (message) => fail(source, lineNo, message);
    if (line.startsWith('#')) {
      // Only the first '#' line is metadata; later ones are comments.
      if (metaLoaded) continue;
      metaLoaded = true;
      const data = parsePythonJson(line.slice(1), (m) => bad(`the metadata is not JSON: ${m}`), 1);
      if (data === null || typeof data !== 'object' || Array.isArray(data)) bad('the metadata is not a JSON object');
      const md = data as Record<string, unknown>;
      if (typeof md.comment === 'string' && md.comment !== '') meta.comment = md.comment;
      if (Array.isArray(md.labels)) {
        const labels = md.labels.filter((l): l is string => typeof l === 'string');
        if (labels.length > 0) meta.labels = labels;
      } else if (typeof md.keywords === 'string' && md.keywords.trim() !== '') {
        meta.labels = md.keywords
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k !== '');
      }
      if (typeof md.save_time === 'number' && Number.isFinite(md.save_time)) meta.time = new Date(md.save_time * 1000).toISOString();
      if (md.macros && typeof md.macros === 'object' && !Array.isArray(md.macros)) {
        macros = Object.fromEntries(Object.entries(md.macros).filter((e): e is [string, string] => typeof e[1] === 'string'));
      }
      continue;
    }
    const stripped = line.trim();
    if (stripped === '') continue;
    const comma = stripped.indexOf(',');
    let name = comma < 0 ? stripped : stripped.slice(0, comma);
    for (const [k, v] of Object.entries(macros)) name = name.split(`$(${k})`).join(v);
    if (name === '') bad('no PV name before the comma');
    // A line of anything else (a text file taken for a snapshot) is not a PV with no value.
    if (/\s/.test(name)) bad(`"${name}" is not a PV name`);
    const pv: SavedPv = { name, ok: false };
    if (comma < 0) {
      pv.error = 'no value saved (not connected when saved)';
    } else {
      const rest = stripped.slice(comma + 1);
      const at = line.indexOf(stripped) + comma + 1;
      let raw: unknown;
      if (rest.startsWith('{')) {
        const data = parsePythonJson(rest, (m) => bad(`the value of ${name} is not JSON: ${m}`), at);
        if (data === null || typeof data !== 'object' || Array.isArray(data) || !('val' in data)) bad(`the value of ${name} has no "val"`);
        const d = data as Record<string, unknown>;
        raw = d.val;
        if (typeof d.egu === 'string') pv.units = d.egu;
        if (typeof d.prec === 'number' && Number.isInteger(d.prec)) pv.precision = d.prec;
        if (d.read_only === true) pv.readOnly = true;
      } else {
        raw = parsePythonJson(rest, (m) => bad(`the value of ${name} is not JSON: ${m}`), at);
      }
      const value = savedValue(raw, (m) => bad(`${name}: ${m}`));
      if (value === 'nested') {
        pv.error = 'the saved value holds nested lists (only one-dimensional arrays are read)';
      } else if (value === undefined) {
        pv.error = 'no value saved (not connected when saved)';
      } else {
        pv.ok = true;
        pv.value = value;
        pv.count = Array.isArray(value) ? value.length : 1;
      }
    }
    // PSI keeps one entry a name, the last one read.
    const index = byName.get(name);
    if (index === undefined) {
      byName.set(name, pvs.length);
      pvs.push(pv);
    } else {
      pvs[index] = pv;
    }
  }
  return { meta, pvs };
}

/**
 * Writes a save set as a PSI snapshot .snap file: metadata (labels, comment, machine_params
 * empty, save_time from meta.time), then `NAME,{"val": ...}` a PV, with "egu" and "prec" when
 * units and precision are known and `"read_only": true` for a read-only PV (keys PSI snapshot
 * reads past); a PV with no value is its name alone. A name with a comma or a line break, or
 * starting with '#', cannot be written and throws BadArgumentError.
 */
export function writePsiSnap(set: SaveSet): string {
  const source = 'PSI snapshot';
  const md: Record<string, unknown> = { labels: set.meta.labels ?? [], comment: set.meta.comment ?? '', machine_params: {} };
  if (set.meta.time !== undefined) {
    const t = Date.parse(set.meta.time);
    if (Number.isNaN(t)) fail(source, undefined, `the save set's time '${set.meta.time}' is not an ISO 8601 time`);
    md.save_time = t / 1000;
  }
  const out = [`#${pythonJson(md)}`];
  for (const pv of set.pvs) {
    if (pv.name === '' || /[,\r\n]/.test(pv.name) || pv.name.startsWith('#') || pv.name.trim() !== pv.name) {
      fail(source, undefined, `the PV name '${pv.name}' cannot be written (a comma, line break, leading '#' or surrounding space)`);
    }
    if (!pv.ok || pv.value === undefined) {
      out.push(pv.name);
      continue;
    }
    const kind = valueKind(pv.value);
    // A whole number of a floating-point PV is written as Python writes a float ("20.0").
    const float = FLOAT_TYPES.has(pv.type ?? '') && (kind === 'number' || kind === 'number[]');
    // A 64-bit integer kept as its decimal string is written as the JSON number it is.
    const int64 = (s: string): boolean => isInt64Text(pv.type, s);
    let val: string;
    if (typeof pv.value === 'string' && int64(pv.value)) val = pv.value;
    else if (kind === 'string[]' && (pv.value as string[]).every(int64)) val = `[${(pv.value as string[]).join(', ')}]`;
    else val = pythonJson(pv.value, float);
    const extra: string[] = [];
    if (pv.units !== undefined) extra.push(`"egu": ${pythonJsonString(pv.units)}`);
    if (pv.precision !== undefined) extra.push(`"prec": ${pv.precision}`);
    if (pv.readOnly) extra.push('"read_only": true');
    out.push(`${pv.name},{${[...extra, `"val": ${val}`].join(', ')}}`);
  }
  return `${out.join('\n')}\n`;
}
