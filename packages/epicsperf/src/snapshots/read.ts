// A PV list read once by this project's client: each answer as the row the `snapshot` command
// reports, the same whether the client read in this process (the command's default) or in a
// runner process of its own (bench/runners/node-workload.ts ships these rows).
import { PvaReading, type Context, type SnapshotResult, type TimeReading } from 'epics-client';
import { ALARM_STATUS_NAMES } from 'epics-client/ca';
import type { SnapshotRow, SnapshotRun } from '../results/index.js';

/** One answer as a runner ships it (JSON): a row without its name and check, with the error's code. */
export type ShippedRow = Omit<SnapshotRow, 'name' | 'correct'> & { code?: string };

/** The CA alarm status of a reading: QSRV sends the CA status name as the PVA alarm message. */
export function statusOf(r: { status: number }): number {
  if (r instanceof PvaReading) {
    const i = ALARM_STATUS_NAMES.indexOf(r.message as (typeof ALARM_STATUS_NAMES)[number]);
    return i >= 0 ? i : r.status;
  }
  return r.status;
}

/** A snapshot's results as rows of plain values (arrays as arrays, 64-bit integers as numbers). */
export function shippedRows(results: readonly SnapshotResult<TimeReading | PvaReading>[]): ShippedRow[] {
  return results.map((r) =>
    r.ok
      ? {
          ok: true,
          value:
            typeof r.value === 'number' || typeof r.value === 'string'
              ? r.value
              : typeof r.value === 'bigint'
                ? Number(r.value)
                : Array.from(r.value as ArrayLike<number>),
          severity: r.severity,
          status: statusOf(r.reading),
          timestamp: r.reading.posixSeconds,
          elapsedMs: r.elapsedMs,
        }
      : { ok: false, error: r.error.message, code: r.code, elapsedMs: r.elapsedMs },
  );
}

/** The report's row of one shipped answer. */
export function snapshotRow(name: string, r: ShippedRow): SnapshotRow {
  const row: SnapshotRow = { name, ok: r.ok === true };
  if (row.ok) {
    row.value = r.value;
    if (typeof r.severity === 'number') row.severity = r.severity;
    if (typeof r.status === 'number') row.status = r.status;
    if (typeof r.timestamp === 'number') row.timestamp = r.timestamp;
  } else row.error = String(r.error ?? 'failed');
  if (typeof r.elapsedMs === 'number') row.elapsedMs = r.elapsedMs;
  return row;
}

/** Read `names` once, at once, through `ctx`, each against its own timeout: the run as the `snapshot` command reports it. */
export async function readSnapshot(
  ctx: Context<'ca' | 'pva'>,
  names: readonly string[],
  timeoutMs: number,
  client: { name: string; version: string },
): Promise<SnapshotRun> {
  const t0 = performance.now();
  const results = await ctx.snapshot(names, { timeout: timeoutMs });
  const wallMs = performance.now() - t0;
  const rows = shippedRows(results as SnapshotResult<TimeReading | PvaReading>[]).map((r, i) => snapshotRow(names[i]!, r));
  const answered = rows.filter((r) => r.ok).length;
  return { client: client.name, version: client.version, ok: true, wallMs, answered, failed: rows.length - answered, wrong: 0, rows };
}
