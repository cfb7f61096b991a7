// This project's snapshot file: versioned, diffable text. The first line is a JSON object of the
// run's metadata with the format's name and version; every following line is one PV as a JSON
// object, in list order, its keys always in the same order. A change of one PV is a change of
// its line. Numbers JSON cannot hold (NaN, Infinity, -Infinity) are written as those words in
// quotes and read back as numbers for a PV of a numeric type. docs/snapshots.md describes it.
import { BadArgumentError } from '../client/errors.js';
import type { SavedPv, SavedValue, SaveSet, SaveSetMeta } from './types.js';

export const FORMAT_NAME = 'epicsperf-snapshot';
export const FORMAT_VERSION = 1;

const META_KEYS = ['time', 'host', 'user', 'protocol', 'comment', 'labels', 'source'] as const;
const TEXT_TYPES = new Set(['string', 'structure']);

/** Is this text a snapshot file of this project (by its first line)? */
export function isNativeSnapshot(text: string): boolean {
  return text.startsWith(`{"format":"${FORMAT_NAME}"`);
}

/** Write a save set as this project's snapshot file. */
export function writeSnapshot(set: SaveSet): string {
  const head: Record<string, unknown> = { format: FORMAT_NAME, version: FORMAT_VERSION };
  for (const k of META_KEYS) if (set.meta[k] !== undefined) head[k] = set.meta[k];
  head.pvs = set.pvs.length;
  const lines = [JSON.stringify(head)];
  for (const pv of set.pvs) lines.push(pvLine(pv));
  return lines.join('\n') + '\n';
}

function pvLine(pv: SavedPv): string {
  if (!pv.ok) return JSON.stringify({ name: pv.name, error: pv.error ?? 'not connected', ...(pv.readOnly ? { readOnly: true } : {}) });
  const o: Record<string, unknown> = { name: pv.name, value: jsonValue(pv.value) };
  if (pv.type !== undefined) o.type = pv.type;
  if (pv.count !== undefined) o.count = pv.count;
  if (pv.severity !== undefined) o.severity = pv.severity;
  if (pv.status !== undefined) o.status = pv.status;
  if (pv.seconds !== undefined) o.time = isoTime(pv.seconds, pv.nanoseconds ?? 0);
  if (pv.units !== undefined) o.units = pv.units;
  if (pv.precision !== undefined) o.precision = pv.precision;
  if (pv.enumStrings !== undefined) o.enumStrings = pv.enumStrings;
  if (pv.readOnly) o.readOnly = true;
  return JSON.stringify(o);
}

function jsonValue(v: SavedValue | undefined): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (Array.isArray(v) && v.some((x) => typeof x === 'number' && !Number.isFinite(x))) {
    return v.map((x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  }
  return v ?? null;
}

/** POSIX seconds and nanoseconds as ISO 8601 with all nine digits: 2026-11-25T12:00:00.123456789Z. */
function isoTime(seconds: number, ns: number): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${base}.${String(ns).padStart(9, '0')}Z`;
}

function parseIso(s: unknown, where: string): [number, number] {
  const m = typeof s === 'string' ? /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(s) : null;
  const secs = m ? Date.parse(`${m[1]}Z`) / 1000 : NaN;
  if (!m || !Number.isFinite(secs))
    throw new BadArgumentError(`${where}: time must be ISO 8601 UTC like 2026-11-25T12:00:00.000000000Z, got ${JSON.stringify(s)}`);
  return [secs, Number((m[2] ?? '').padEnd(9, '0'))];
}

/** Read this project's snapshot file; throws BadArgumentError (one line, naming the line) on anything wrong. */
export function parseSnapshot(text: string, source = 'snapshot'): SaveSet {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const head = parseLine(lines[0] ?? '', `${source} line 1`);
  if (head.format !== FORMAT_NAME) throw new BadArgumentError(`${source} line 1: not an ${FORMAT_NAME} file`);
  if (head.version !== FORMAT_VERSION) {
    throw new BadArgumentError(`${source} line 1: format version ${JSON.stringify(head.version)}, this version reads ${FORMAT_VERSION}`);
  }
  const meta: SaveSetMeta = {};
  for (const k of META_KEYS) {
    const v = head[k];
    if (v === undefined) continue;
    if (k === 'labels' ? !Array.isArray(v) || v.some((x) => typeof x !== 'string') : typeof v !== 'string') {
      throw new BadArgumentError(`${source} line 1: ${k} must be ${k === 'labels' ? 'a list of strings' : 'a string'}`);
    }
    (meta as Record<string, unknown>)[k] = v;
  }
  const pvs: SavedPv[] = [];
  const seen = new Set<string>();
  for (let i = 1; i < lines.length; i++) {
    const where = `${source} line ${i + 1}`;
    const pv = pvOf(parseLine(lines[i]!, where), where);
    if (seen.has(pv.name)) throw new BadArgumentError(`${where}: ${pv.name} appears twice`);
    seen.add(pv.name);
    pvs.push(pv);
  }
  if (typeof head.pvs === 'number' && head.pvs !== pvs.length) {
    throw new BadArgumentError(`${source}: the header says ${head.pvs} PVs, the file has ${pvs.length} (cut short?)`);
  }
  return { meta, pvs };
}

function parseLine(line: string, where: string): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    throw new BadArgumentError(`${where}: not a JSON object`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new BadArgumentError(`${where}: not a JSON object`);
  return o as Record<string, unknown>;
}

function pvOf(o: Record<string, unknown>, where: string): SavedPv {
  const name = o.name;
  if (typeof name !== 'string' || name === '' || /\s/.test(name)) throw new BadArgumentError(`${where}: a PV needs a name without spaces`);
  const readOnly = o.readOnly === true ? { readOnly: true } : {};
  if (o.error !== undefined) return { name, ok: false, error: String(o.error), ...readOnly };
  if (!('value' in o)) throw new BadArgumentError(`${where}: ${name} has neither a value nor an error`);
  const pv: SavedPv = { name, ok: true, value: savedValue(o.value, o.type, `${where} (${name})`) };
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v !== undefined && typeof v !== 'string') throw new BadArgumentError(`${where}: ${name}'s ${k} must be a string`);
    return v as string | undefined;
  };
  const int = (k: string): number | undefined => {
    const v = o[k];
    if (v !== undefined && !Number.isInteger(v)) throw new BadArgumentError(`${where}: ${name}'s ${k} must be an integer`);
    return v as number | undefined;
  };
  const type = str('type'),
    units = str('units');
  const count = int('count'),
    severity = int('severity'),
    status = int('status'),
    precision = int('precision');
  if (type !== undefined) pv.type = type;
  if (count !== undefined) pv.count = count;
  if (severity !== undefined) pv.severity = severity;
  if (status !== undefined) pv.status = status;
  if (o.time !== undefined) [pv.seconds, pv.nanoseconds] = parseIso(o.time, `${where} (${name})`);
  if (units !== undefined) pv.units = units;
  if (precision !== undefined) pv.precision = precision;
  if (o.enumStrings !== undefined) {
    if (!Array.isArray(o.enumStrings) || o.enumStrings.some((x) => typeof x !== 'string')) {
      throw new BadArgumentError(`${where}: ${name}'s enumStrings must be a list of strings`);
    }
    pv.enumStrings = o.enumStrings as string[];
  }
  if (o.readOnly === true) pv.readOnly = true;
  return pv;
}

function savedValue(v: unknown, type: unknown, where: string): SavedValue {
  const numeric = typeof type === 'string' && !TEXT_TYPES.has(type);
  const num = (x: unknown): unknown => (numeric && (x === 'NaN' || x === 'Infinity' || x === '-Infinity') ? Number(x) : x);
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'string') return num(v) as SavedValue;
  if (Array.isArray(v)) {
    const kinds = new Set(v.map((x) => typeof num(x)));
    if (kinds.size <= 1 && !kinds.has('object') && !kinds.has('undefined')) return v.map(num) as SavedValue;
  }
  throw new BadArgumentError(`${where}: value must be a number, a string, a boolean or a list of one of them`);
}
