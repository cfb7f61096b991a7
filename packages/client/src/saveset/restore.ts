// Restoring a save set: the PVs it may write are read at once (with, over CA, their access rights);
// those that differ from the save beyond the tolerance are written at once with completion (CA
// WRITE_NOTIFY, a PVA put), each against its own timeout; then read back and compared. Every PV
// ends with an outcome, an interrupted restore too: what was written is told by the read-back.
import { splitName, type Context, type Protocol } from '../client/context.js';
import { AccessDeniedError, EpicsError, RemoteError } from '../client/errors.js';
import type { PutValue } from '../client/options.js';
import type { PvaPutValue } from '../pva/fields.js';
import { comparePv, type CompareOptions, toleranceFor } from './compare.js';
import { save, withLiveStates } from './save.js';
import type { SavedPv, SavedValue, SaveSet } from './types.js';

/** How a PV Access server words a put it refuses for access security (QSRV: "Put not permitted"). */
const REFUSED = /not permitted|access denied|no write access/i;

export type RestoreOutcome = 'restored' | 'equal' | 'skipped' | 'failed' | 'not-written';

/** Why a PV was skipped or not written; an EPICS error code when a write or a read failed. */
export type RestoreCode =
  | 'read-only'
  | 'no-access'
  | 'not-saved'
  | 'dry-run'
  | 'declined'
  | 'interrupted'
  | 'not-connected'
  | 'read-back'
  | EpicsError['code'];

export interface PvRestore {
  name: string;
  outcome: RestoreOutcome;
  code?: RestoreCode;
  reason?: string;
  /** The saved value (an enum as its state name), the live one before and after. */
  saved?: SavedValue;
  before?: SavedValue;
  after?: SavedValue;
}

export interface RestoreSummary {
  /** PVs of the save set the restore considered (`only` may leave some out). */
  selected: number;
  restored: number;
  equal: number;
  skipped: number;
  failed: number;
  notWritten: number;
}

export interface RestoreReport {
  pvs: PvRestore[];
  summary: RestoreSummary;
  dryRun: boolean;
  interrupted: boolean;
  /** Milliseconds of each phase: reading before, writing, reading back. */
  timings: { readMs: number; writeMs: number; readBackMs: number };
}

/** The changes a restore is about to write, for a confirmation. */
export interface RestorePlan {
  changes: PvRestore[];
  report: RestoreReport;
}

export interface RestoreOptions extends CompareOptions {
  /** Milliseconds each PV has for each step (read, write, read back; default 5000). */
  timeout?: number;
  /** Read and compare, write nothing: the PVs that would be written end 'not-written' (code 'dry-run'). */
  dryRun?: boolean;
  /** Write the PVs already equal to their saved value too (as Phoebus and PSI's snapshot do); default false. */
  rewrite?: boolean;
  /** Asked with the changes before anything is written; false writes nothing (code 'declined'). */
  confirm?: (plan: RestorePlan) => boolean | Promise<boolean>;
  /** Stops the writes: those not confirmed are read back to tell whether they were written. */
  signal?: AbortSignal;
}

/** Write a save set back, PV by PV at once, and tell what became of each. Never rejects for a PV's failure. */
export async function restore(ctx: Context<Protocol>, set: SaveSet, opts: RestoreOptions = {}): Promise<RestoreReport> {
  const timeout = opts.timeout;
  const report: RestoreReport = {
    pvs: [],
    summary: { selected: 0, restored: 0, equal: 0, skipped: 0, failed: 0, notWritten: 0 },
    dryRun: opts.dryRun === true,
    interrupted: false,
    timings: { readMs: 0, writeMs: 0, readBackMs: 0 },
  };
  const chosen = set.pvs.filter((p) => !opts.only || opts.only.test(p.name));
  let candidates: SavedPv[] = [];
  const outcome = new Map<string, PvRestore>();
  for (const pv of chosen) {
    const r: PvRestore = { name: pv.name, outcome: 'skipped' };
    outcome.set(pv.name, r);
    report.pvs.push(r);
    if (!pv.ok) Object.assign(r, { code: 'not-saved', reason: `not saved: ${pv.error ?? 'no value'}` });
    else if (pv.readOnly) Object.assign(r, { code: 'read-only', reason: 'read-only in the snapshot', saved: shownValue(pv) });
    else candidates.push(pv);
  }

  // Before: the live values and, over CA, the access rights (the channels are open by then).
  const t = performance.now();
  const names = candidates.map((p) => p.name);
  const [live, access] = await Promise.all([
    save(ctx, names, { timeout, metadata: false, signal: opts.signal }),
    Promise.all(
      names.map((n) =>
        splitName(n, ctx.protocol)[0] === 'ca'
          ? ctx.info(n, { timeout, signal: opts.signal }).then(
              (i) => i.writeAccess,
              () => undefined,
            )
          : undefined,
      ),
    ),
  ]);
  candidates = await withLiveStates(ctx, candidates, live.pvs, { timeout, signal: opts.signal });
  report.timings.readMs = performance.now() - t;
  const toWrite: SavedPv[] = [];
  candidates.forEach((pv, i) => {
    const r = outcome.get(pv.name)!;
    const cur = live.pvs[i]!;
    const d = comparePv(pv, cur, toleranceFor(opts.tolerance, pv.name));
    r.saved = d.a;
    if (cur.ok) r.before = d.b;
    if (!cur.ok) Object.assign(r, { outcome: 'failed', code: 'not-connected', reason: `not connected: ${cur.error}` });
    else if (d.status === 'equal' && !opts.rewrite) r.outcome = 'equal';
    else if (access[i] === false) Object.assign(r, { outcome: 'skipped', code: 'no-access', reason: 'no write access' });
    else toWrite.push(pv);
  });
  const changes = toWrite.map((pv) => outcome.get(pv.name)!);
  const hold = (code: RestoreCode, reason: string) => changes.forEach((r) => Object.assign(r, { outcome: 'not-written', code, reason }));
  if (opts.dryRun) hold('dry-run', 'would be written');
  else if (opts.signal?.aborted) {
    report.interrupted = true;
    hold('interrupted', 'interrupted before writing');
  } else if (changes.length > 0 && opts.confirm && !(await opts.confirm({ changes, report }))) hold('declined', 'not confirmed');
  else if (changes.length > 0) await writeAll(ctx, toWrite, outcome, report, opts);
  tally(report);
  return report;
}

async function writeAll(
  ctx: Context<Protocol>,
  toWrite: SavedPv[],
  outcome: Map<string, PvRestore>,
  report: RestoreReport,
  opts: RestoreOptions,
): Promise<void> {
  let t = performance.now();
  const results = await Promise.all(
    toWrite.map((pv) =>
      ctx.put(pv.name, putValueOf(ctx, pv), { timeout: opts.timeout, signal: opts.signal }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    ),
  );
  report.timings.writeMs = performance.now() - t;
  report.interrupted = opts.signal?.aborted === true;
  const check: SavedPv[] = [];
  results.forEach((e, i) => {
    const pv = toWrite[i]!;
    const r = outcome.get(pv.name)!;
    if (e === undefined) check.push(pv);
    else if (e instanceof EpicsError && e.code === 'ERR_EPICS_ABORTED') {
      // Sent or not, it may have been written: the read-back tells.
      Object.assign(r, { outcome: 'not-written', code: 'interrupted', reason: 'interrupted before its completion' });
      check.push(pv);
    } else if (e instanceof AccessDeniedError) Object.assign(r, { outcome: 'skipped', code: 'no-access', reason: 'no write access' });
    else if (e instanceof RemoteError && REFUSED.test(e.message)) {
      // PV Access tells no access rights beforehand: the server's refusal of the put says it.
      Object.assign(r, { outcome: 'skipped', code: 'no-access', reason: `no write access (the server: ${e.message})` });
    } else
      Object.assign(r, {
        outcome: 'failed',
        ...(e instanceof EpicsError ? { code: e.code } : {}),
        reason: e instanceof Error ? e.message : String(e),
      });
  });
  // Read back without the signal (an interrupted restore still learns what it wrote), a short
  // time when interrupted.
  t = performance.now();
  const back = await save(
    ctx,
    check.map((p) => p.name),
    { timeout: report.interrupted ? Math.min(opts.timeout ?? 5000, 2000) : opts.timeout, metadata: false },
  );
  report.timings.readBackMs = performance.now() - t;
  check.forEach((pv, i) => {
    const r = outcome.get(pv.name)!;
    const cur = back.pvs[i]!;
    const d = comparePv(pv, cur, toleranceFor(opts.tolerance, pv.name));
    if (cur.ok) r.after = d.b;
    if (d.status === 'equal') {
      r.outcome = 'restored';
      if (r.code === 'interrupted') r.reason = 'written before the interruption';
      delete r.code;
    } else if (r.code === 'interrupted') r.reason = cur.ok ? 'interrupted: not written' : `interrupted; read-back failed: ${cur.error}`;
    else
      Object.assign(r, {
        outcome: 'failed',
        code: 'read-back',
        reason: cur.ok ? `read back ${fmt(r.after)}, saved ${fmt(r.saved)}` : `read-back failed: ${cur.error}`,
      });
  });
}

function tally(report: RestoreReport): void {
  const s = report.summary;
  s.selected = report.pvs.length;
  for (const r of report.pvs) {
    if (r.outcome === 'restored') s.restored++;
    else if (r.outcome === 'equal') s.equal++;
    else if (r.outcome === 'skipped') s.skipped++;
    else if (r.outcome === 'failed') s.failed++;
    else s.notWritten++;
  }
}

/** The value to put: an enum by its state name over CA (the server maps it), 64-bit strings as bigint over PVA. */
function putValueOf(ctx: Context<Protocol>, pv: SavedPv): PutValue | PvaPutValue {
  const v = pv.value!;
  const pva = splitName(pv.name, ctx.protocol)[0] === 'pva';
  if (!pva && pv.enumStrings && typeof v === 'number' && pv.enumStrings[v] !== undefined) return pv.enumStrings[v]!;
  if (pva && typeof v === 'string' && /^(long|ulong)$/.test(pv.type ?? '') && /^-?\d+$/.test(v)) return BigInt(v);
  return v as PutValue;
}

function shownValue(pv: SavedPv): SavedValue | undefined {
  return pv.enumStrings && typeof pv.value === 'number' ? (pv.enumStrings[pv.value] ?? pv.value) : pv.value;
}

function fmt(v: SavedValue | undefined): string {
  return v === undefined ? '(none)' : JSON.stringify(v);
}
