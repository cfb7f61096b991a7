// pvRequest builder: "field(value,alarm,timeStamp)record[queueSize=4,pipeline=true]" (or its
// parts as options) to the request structure servers expect with GET, PUT and MONITOR INIT.
import { DecodeError } from './buffer.js';
import { scalar, type FieldEntry, type StructureDesc } from './types.js';
import type { PvStructure, Typed } from './values.js';

export interface PvRequestOptions {
  /** Field paths ("value", "alarm.severity"); empty or absent: every field. */
  fields?: string[];
  /** Record options (queueSize, pipeline, process, block, ...), sent as strings. */
  record?: Record<string, string | number | boolean>;
}

interface Node {
  children: Map<string, Node>;
}

function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0,
    cur = '';
  for (const c of s) {
    if (c === '(' || c === '[') depth++;
    if (c === ')' || c === ']') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

/** Parse the pvRequest string form into options. Throws DecodeError on a malformed string. */
export function parsePvRequest(text: string): PvRequestOptions {
  const fields: string[] = [];
  const record: Record<string, string> = {};
  let s = text.trim();
  while (s) {
    const m = /^(field|record|putField|getField)\s*([([])/.exec(s);
    if (!m) {
      // Bare form: "value,alarm".
      for (const f of splitTop(s)) fields.push(f);
      break;
    }
    const close = m[2] === '(' ? ')' : ']';
    let depth = 0,
      end = -1;
    for (let i = m[0].length - 1; i < s.length; i++) {
      const c = s[i];
      if (c === '(' || c === '[') depth++;
      else if (c === ')' || c === ']') {
        depth--;
        if (depth === 0) {
          end = i;
          break;
        }
      }
    }
    if (end < 0 || s[end] !== close) throw new DecodeError(`unbalanced pvRequest: ${text}`);
    const body = s.slice(m[0].length, end);
    if (m[1] === 'record') {
      for (const opt of splitTop(body)) {
        const eq = opt.indexOf('=');
        if (eq < 0) throw new DecodeError(`record option without a value: ${opt}`);
        record[opt.slice(0, eq).trim()] = opt.slice(eq + 1).trim();
      }
    } else fields.push(...splitTop(body));
    s = s
      .slice(end + 1)
      .trim()
      .replace(/^,/, '')
      .trim();
  }
  return Object.keys(record).length ? { fields, record } : { fields };
}

function toStructure(n: Node): [StructureDesc, PvStructure] {
  const fields: FieldEntry[] = [];
  const value: PvStructure = {};
  for (const [name, child] of n.children) {
    const [t, v] = toStructure(child);
    fields.push({ name, type: t });
    value[name] = v;
  }
  return [{ kind: 'structure', id: '', fields }, value];
}

/**
 * The pvRequest structure: { field: { value: {}, alarm: {} ... }, record: { _options: { k: "v" } } }.
 * Fields keep their order; record options are sorted by name. Accepts the string form too.
 */
export function buildPvRequest(req: string | PvRequestOptions = {}): Typed {
  const o = typeof req === 'string' ? parsePvRequest(req) : req;
  const root: Node = { children: new Map() };
  const field: Node = { children: new Map() };
  root.children.set('field', field);
  for (const path of o.fields ?? []) {
    let cur = field;
    for (const part of path.split('.')) {
      if (!part) continue;
      let next = cur.children.get(part);
      if (!next) {
        next = { children: new Map() };
        cur.children.set(part, next);
      }
      cur = next;
    }
  }
  const [type, value] = toStructure(root);
  const opts = Object.entries(o.record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (opts.length) {
    const optFields: FieldEntry[] = opts.map(([k]) => ({ name: k, type: scalar('string') }));
    const optValue: PvStructure = {};
    for (const [k, v] of opts) optValue[k] = String(v);
    type.fields.push({
      name: 'record',
      type: { kind: 'structure', id: '', fields: [{ name: '_options', type: { kind: 'structure', id: '', fields: optFields } }] },
    });
    value.record = { _options: optValue };
  }
  return { type, value };
}

/** The queue size and pipelining a pvRequest asks a monitor for. */
export function monitorOptions(req: Typed): { queueSize?: number; pipeline: boolean } {
  const rec = (req.value as PvStructure).record as PvStructure | undefined;
  const opts = (rec?._options ?? {}) as Record<string, unknown>;
  const q = Number(opts.queueSize);
  const out: { queueSize?: number; pipeline: boolean } = { pipeline: String(opts.pipeline) === 'true' };
  if (Number.isInteger(q) && q > 0) out.queueSize = q;
  return out;
}
