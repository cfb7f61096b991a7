// Comparing two save sets, or one with the live machine: per PV equal, different (both values, the
// difference; for arrays how many elements differ and the largest difference), only on one side,
// or not connected; numbers within a tolerance (absolute, relative or from the PV's precision),
// enums by state name, strings exactly.
import type { Context, Protocol } from '../client/context.js';
import { save, withLiveStates } from './save.js';
import type { SavedPv, SavedValue, SaveSet, SaveSetMeta, Tolerance } from './types.js';

export type DiffStatus = 'equal' | 'different' | 'only-a' | 'only-b' | 'not-connected';

export interface PvDiff {
  name: string;
  status: DiffStatus;
  /** The values as shown (an enum as its state name), when that side has one. */
  a?: SavedValue;
  b?: SavedValue;
  /** b - a for two numbers. */
  difference?: number;
  /** For arrays: elements that differ beyond the tolerance, and the largest difference. */
  elementsDiffering?: number;
  largestDifference?: number;
  /** The difference allowed for this PV (0: exact). */
  allowed?: number;
  /** What else there is to say: lengths or types that differ, why a side did not connect. */
  note?: string;
}

export interface DiffSummary {
  total: number;
  equal: number;
  different: number;
  onlyA: number;
  onlyB: number;
  notConnected: number;
}

export interface Diff {
  a: SaveSetMeta;
  b: SaveSetMeta;
  pvs: PvDiff[];
  summary: DiffSummary;
  /** Every PV on both sides, connected on both, equal within the tolerance. */
  equal: boolean;
}

/** A tolerance for every PV, or per PV (a function of the name; undefined: exact). */
export type ToleranceRule = Tolerance | ((name: string) => Tolerance | undefined);

export interface CompareOptions {
  tolerance?: ToleranceRule;
  /** Only PVs whose name this matches (on both sides). */
  only?: RegExp;
}

/** Compare two save sets PV by PV, by name: a's PVs in a's order, then those only in b. */
export function compare(a: SaveSet, b: SaveSet, opts: CompareOptions = {}): Diff {
  const chosen = (pv: SavedPv): boolean => !opts.only || opts.only.test(pv.name);
  const byName = new Map<string, SavedPv>();
  for (const pv of b.pvs) if (chosen(pv)) byName.set(pv.name, pv);
  const pvs: PvDiff[] = [];
  const inA = new Set<string>();
  for (const pa of a.pvs) {
    if (!chosen(pa)) continue;
    inA.add(pa.name);
    const pb = byName.get(pa.name);
    pvs.push(
      pb
        ? comparePv(pa, pb, toleranceFor(opts.tolerance, pa.name))
        : { name: pa.name, status: 'only-a', ...(pa.ok ? { a: shown(pa) } : {}) },
    );
  }
  for (const pb of byName.values())
    if (!inA.has(pb.name)) pvs.push({ name: pb.name, status: 'only-b', ...(pb.ok ? { b: shown(pb) } : {}) });
  const summary = summarize(pvs);
  return { a: a.meta, b: b.meta, pvs, summary, equal: summary.equal === summary.total };
}

export interface LiveCompareOptions extends CompareOptions {
  /** Milliseconds each PV has to answer (default 5000). */
  timeout?: number;
  signal?: AbortSignal;
}

/**
 * Compare a save set with the machine as it is now: its PVs read at once (value, alarm and
 * timestamp; units, precision and enum states come from the save, or live for an enum the save
 * holds by name with no states). `b` is the live side.
 */
export async function compareLive(ctx: Context<Protocol>, set: SaveSet, opts: LiveCompareOptions = {}): Promise<Diff & { live: SaveSet }> {
  const call = { timeout: opts.timeout, signal: opts.signal };
  const pvs = set.pvs.filter((p) => !opts.only || opts.only.test(p.name));
  const live = await save(
    ctx,
    pvs.map((p) => p.name),
    { ...call, metadata: false },
  );
  live.meta.source = 'live';
  const saved = { meta: set.meta, pvs: await withLiveStates(ctx, pvs, live.pvs, call) };
  return { ...compare(saved, live, opts), live };
}

function summarize(pvs: readonly PvDiff[]): DiffSummary {
  const s: DiffSummary = { total: pvs.length, equal: 0, different: 0, onlyA: 0, onlyB: 0, notConnected: 0 };
  for (const p of pvs) {
    if (p.status === 'equal') s.equal++;
    else if (p.status === 'different') s.different++;
    else if (p.status === 'only-a') s.onlyA++;
    else if (p.status === 'only-b') s.onlyB++;
    else s.notConnected++;
  }
  return s;
}

export function toleranceFor(rule: ToleranceRule | undefined, name: string): Tolerance | undefined {
  return typeof rule === 'function' ? rule(name) : rule;
}

/** The difference allowed between two numbers under a tolerance (precision from either side). */
function allowedFor(t: Tolerance | undefined, x: number, y: number, precision: number | undefined): number {
  if (!t) return 0;
  let d = t.abs ?? 0;
  if (t.rel !== undefined) d = Math.max(d, t.rel * Math.max(Math.abs(x), Math.abs(y)));
  if (t.precision !== undefined && precision !== undefined) d = Math.max(d, t.precision * 10 ** -precision);
  return d;
}

/** Compare one PV present in both sets. */
export function comparePv(pa: SavedPv, pb: SavedPv, tol: Tolerance | undefined): PvDiff {
  const name = pa.name;
  if (!pa.ok || !pb.ok) {
    const which = !pa.ok && !pb.ok ? 'either side' : !pa.ok ? 'a' : 'b';
    const err = (!pa.ok ? pa.error : pb.error) ?? 'no value';
    return {
      name,
      status: 'not-connected',
      ...(pa.ok ? { a: shown(pa) } : {}),
      ...(pb.ok ? { b: shown(pb) } : {}),
      note: `not connected in ${which}: ${err}`,
    };
  }
  const out: PvDiff = { name, status: 'equal', a: shown(pa), b: shown(pb) };
  const states = pa.enumStrings ?? pb.enumStrings;
  if (states && (isEnum(pa) || isEnum(pb))) {
    // Enums by state: an index against a state name, or two indexes under each side's states.
    const sa = stateOf(pa, states),
      sb = stateOf(pb, pb.enumStrings ?? states);
    out.a = sa;
    out.b = sb;
    if (sa !== sb) out.status = 'different';
    return out;
  }
  const va = scalarOf(pa.value!),
    vb = scalarOf(pb.value!);
  const precision = pa.precision ?? pb.precision;
  if (Array.isArray(va) || Array.isArray(vb)) {
    const xa = Array.isArray(va) ? va : [va],
      xb = Array.isArray(vb) ? vb : [vb];
    let differing = Math.abs(xa.length - xb.length),
      largest = 0,
      maxAllowed = 0;
    for (let i = 0; i < Math.min(xa.length, xb.length); i++) {
      const r = compareScalar(xa[i]!, xb[i]!, tol, precision);
      if (!r.equal) differing++;
      if (r.difference !== undefined && Math.abs(r.difference) > Math.abs(largest)) largest = r.difference;
      maxAllowed = Math.max(maxAllowed, r.allowed);
    }
    out.allowed = maxAllowed;
    if (differing > 0) {
      out.status = 'different';
      out.elementsDiffering = differing;
      out.largestDifference = largest;
      if (xa.length !== xb.length) out.note = `${xa.length} elements against ${xb.length}`;
    }
    return out;
  }
  const r = compareScalar(va, vb, tol, precision);
  out.allowed = r.allowed;
  if (r.difference !== undefined) out.difference = r.difference;
  if (!r.equal) out.status = 'different';
  return out;
}

function isEnum(pv: SavedPv): boolean {
  return pv.type === 'enum' || pv.enumStrings !== undefined;
}

/** An enum's state name (an index without a name stays the index). */
function stateOf(pv: SavedPv, states: readonly string[]): SavedValue {
  const v = scalarOf(pv.value!);
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < states.length) return states[v]!;
  return v as SavedValue;
}

/** A one-element array compares as its element (a CA count-1 waveform reads as a scalar). */
function scalarOf(v: SavedValue): number | string | boolean | (number | string | boolean)[] {
  return Array.isArray(v) && v.length === 1 ? v[0]! : v;
}

function numberOf(x: number | string | boolean): number | undefined {
  if (typeof x === 'number') return x;
  if (typeof x === 'boolean') return x ? 1 : 0;
  const t = x.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isNaN(n) && t !== 'NaN' ? undefined : n;
}

function compareScalar(
  x: number | string | boolean,
  y: number | string | boolean,
  tol: Tolerance | undefined,
  precision: number | undefined,
): { equal: boolean; difference?: number; allowed: number } {
  if (typeof x === 'string' && typeof y === 'string') return { equal: x === y, allowed: 0 };
  const a = numberOf(x),
    b = numberOf(y);
  if (a === undefined || b === undefined) return { equal: String(x) === String(y), allowed: 0 };
  const allowed = allowedFor(tol, a, b, precision);
  if (Number.isNaN(a) || Number.isNaN(b)) return { equal: Number.isNaN(a) && Number.isNaN(b), allowed };
  if (a === b) return { equal: true, difference: 0, allowed };
  const difference = b - a;
  return { equal: Math.abs(difference) <= allowed, difference, allowed };
}

/** A PV's value as a diff shows it. */
function shown(pv: SavedPv): SavedValue {
  return pv.enumStrings ? stateOf(pv, pv.enumStrings) : pv.value!;
}
