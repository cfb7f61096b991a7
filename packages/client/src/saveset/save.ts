// Saving: every name read at once through a Context's snapshot (CA names in the TIME form for
// value, alarm and timestamp, and in the CTRL form for units, precision and enum states; PVA names
// as their whole structure), each result becoming a SavedPv, answered or not.
import { hostname, userInfo } from 'node:os';
import { EPICS_EPOCH_OFFSET, NATIVE_TYPE_NAMES } from '../ca/constants.js';
import type { Reading } from '../ca/dbr.js';
import { type Context, type Protocol, splitName } from '../client/context.js';
import { PvaReading } from '../client/pva/reading.js';
import type { SnapshotResult } from '../client/snapshot.js';
import type { FieldDesc } from '../pva/types.js';
import type { SavedPv, SavedValue, SaveSet, SaveSetMeta } from './types.js';

export interface SaveOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  signal?: AbortSignal;
  /** Read units, precision and enum states too (default true; a CA name is then read twice at once). */
  metadata?: boolean;
  comment?: string;
  labels?: string[];
}

/** Read every name at once and keep what each gave (or why it gave nothing), in list order. */
export async function save(ctx: Context<Protocol>, names: readonly string[], opts: SaveOptions = {}): Promise<SaveSet> {
  const call = { timeout: opts.timeout, signal: opts.signal };
  const withMeta = opts.metadata !== false;
  const caIdx: number[] = [];
  if (withMeta) names.forEach((n, i) => splitName(n, ctx.protocol)[0] === 'ca' && caIdx.push(i));
  const [values, ctrl] = await Promise.all([
    ctx.snapshot(names, { ...call, form: 'time', request: withMeta ? 'field()' : undefined }),
    caIdx.length > 0
      ? ctx.snapshot(
          caIdx.map((i) => names[i]!),
          { ...call, form: 'ctrl' },
        )
      : [],
  ]);
  const pvs = values.map((r, i) => savedOf(names[i]!, r as SnapshotResult<Reading | PvaReading>));
  caIdx.forEach((i, k) => {
    const c = ctrl[k]!;
    if (c.ok) addCaMetadata(pvs[i]!, c.reading as Reading);
  });
  return { meta: metaOf(ctx, names, opts), pvs };
}

/**
 * Enums saved by a state name with no states of their own (a PSI .snap or an autosave file of
 * pyepics's `as_string` reads carries none) take the live states, read in the CTRL form, so that
 * the name compares with the index the IOC gives (`live` is `pvs` read without metadata).
 */
export async function withLiveStates(
  ctx: Context<Protocol>,
  pvs: SavedPv[],
  live: readonly SavedPv[],
  call: Pick<SaveOptions, 'timeout' | 'signal'>,
): Promise<SavedPv[]> {
  const idx = pvs.flatMap((pv, i) =>
    typeof pv.value === 'string' && !pv.enumStrings && live[i]!.ok && live[i]!.type === 'enum' ? [i] : [],
  );
  if (idx.length === 0) return pvs;
  const ctrl = await ctx.snapshot(
    idx.map((i) => pvs[i]!.name),
    { ...call, form: 'ctrl' },
  );
  const out = [...pvs];
  idx.forEach((i, k) => {
    const r = ctrl[k]!;
    const states = r.ok ? (r.reading as Reading).metadata?.enumStrings : undefined;
    if (states) out[i] = { ...pvs[i]!, enumStrings: [...states] };
  });
  return out;
}

/** The run's metadata: when, where, who, over which protocol, and what the user said of it. */
function metaOf(ctx: Context<Protocol>, names: readonly string[], opts: Pick<SaveOptions, 'comment' | 'labels'>): SaveSetMeta {
  const protos = new Set(names.map((n) => splitName(n, ctx.protocol)[0]));
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER;
  }
  const meta: SaveSetMeta = {
    time: new Date().toISOString(),
    host: hostname(),
    user,
    protocol: protos.size > 1 ? 'mixed' : ([...protos][0] ?? ctx.protocol),
  };
  if (opts.comment !== undefined) meta.comment = opts.comment;
  if (opts.labels !== undefined && opts.labels.length > 0) meta.labels = [...opts.labels];
  return meta;
}

function savedOf(name: string, r: SnapshotResult<Reading | PvaReading>): SavedPv {
  if (!r.ok) return { name, ok: false, error: `${r.code}: ${r.error.message}` };
  const rd = r.reading;
  return rd instanceof PvaReading ? savedPva(name, rd) : savedCa(name, rd);
}

function savedCa(name: string, r: Reading): SavedPv {
  const type = NATIVE_TYPE_NAMES[r.dbrType % 7] ?? 'string';
  return {
    name,
    ok: true,
    value: plainValue(r.value),
    type,
    count: r.count,
    severity: r.severity ?? 0,
    status: r.status ?? 0,
    seconds: (r.secondsPastEpoch ?? 0) + EPICS_EPOCH_OFFSET,
    nanoseconds: r.nanoseconds ?? 0,
  };
}

function addCaMetadata(pv: SavedPv, c: Reading): void {
  const m = c.metadata;
  if (!pv.ok || !m) return;
  if (m.units !== undefined) pv.units = m.units;
  if (m.precision !== undefined && (pv.type === 'double' || pv.type === 'float')) pv.precision = m.precision;
  if (m.enumStrings !== undefined && pv.type === 'enum') pv.enumStrings = [...m.enumStrings];
}

function savedPva(name: string, r: PvaReading): SavedPv {
  const nt = r.nt;
  const pv: SavedPv = {
    name,
    ok: true,
    value: plainValue(r.value),
    type: 'structure',
    count: 1,
    severity: r.severity,
    status: r.status,
    seconds: r.secondsPastEpoch,
    nanoseconds: r.nanoseconds,
  };
  if (nt.kind === 'NTEnum') {
    pv.type = 'enum';
    pv.value = nt.value.index;
    pv.enumStrings = [...nt.value.choices];
  } else {
    pv.type = valueType(r.type) ?? 'structure';
    if (Array.isArray(pv.value)) pv.count = pv.value.length;
    if ((nt.kind === 'NTScalar' || nt.kind === 'NTScalarArray') && nt.display) {
      if (nt.display.units !== undefined) pv.units = nt.display.units;
      if (nt.display.precision !== undefined && /^(double|float)$/.test(pv.type)) pv.precision = nt.display.precision;
    }
  }
  return pv;
}

/** The scalar type of a structure's `value` field (an array's element type). */
function valueType(t: FieldDesc): string | undefined {
  if (t.kind !== 'structure') return undefined;
  const v = t.fields.find((f) => f.name === 'value')?.type;
  return v && (v.kind === 'scalar' || v.kind === 'scalarArray') ? v.type : undefined;
}

/** A value as a save keeps it: arrays as plain arrays, 64-bit integers as numbers (or strings past 2^53). */
function plainValue(v: unknown): SavedValue {
  if (typeof v === 'bigint') return bigToPlain(v);
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) return Array.from(v, bigToPlain) as number[];
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'bigint' ? bigToPlain(x) : x)) as SavedValue;
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

function bigToPlain(v: bigint): number | string {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v.toString();
}
