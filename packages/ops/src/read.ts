// A PV list read once by epics-client: each answer as the row the `snapshot` command reports,
// the same whether it read in the command's own process or (epicsperf) in a benchmark runner
// process of its own, which ships these rows.
import { PvaReading, type Context, type SnapshotResult, type TimeReading } from 'epics-client';
import { ALARM_STATUS_NAMES } from 'epics-client/ca';

/** The format of `snapshot --format json`'s document (schema/snapshot.schema.json of epicsperf). */
export const SNAPSHOT_FORMAT = 'epicsperf/snapshot@1';

// A whole number: `number` to TypeScript, `integer` in the JSON Schemas that epicsperf generates
// from these types and its own (scripts/schemas.mjs); inlined there, never a definition of its own.
/** @internal @asType integer */
export type Integer = number;

/** One PV's answer. */
export interface SnapshotRow {
  name: string;
  ok: boolean;
  /** A number, a string, or an array of numbers. */
  value?: unknown;
  /** Alarm severity: 0 NO_ALARM, 1 MINOR, 2 MAJOR, 3 INVALID. */
  severity?: Integer;
  /** Alarm status (the menuAlarmStat index). */
  status?: Integer;
  /** IOC timestamp, POSIX seconds. */
  timestamp?: number;
  /** From the start to this PV's result, ms. */
  elapsedMs?: number;
  /** Why it failed. */
  error?: string;
  /** Whether the value agrees with what the IOC held around the run, as the referee (the C runner
   *  on libca) read it (undefined: not checked; the `snapshot` command checks with --check). */
  correct?: boolean;
}

/** What a snapshot run and the `snapshot` command's document both say of it. */
export interface SnapshotOutcome {
  client: string;
  /** The host it ran on (a name of `hosts`), when not the orchestrator's. */
  host?: string;
  /** Version of the client library. */
  version?: string;
  error?: string;
  /** From `start` to `done` (the last result), measured by the orchestrator, ms. */
  wallMs?: number;
  answered: Integer;
  failed: Integer;
  /** Set when the values could not be checked: why the referee (the C runner on libca) could not read. */
  unchecked?: string;
}

export interface SnapshotRun extends SnapshotOutcome {
  ok: boolean;
  /** Answers that disagree with the IOC (a wrong value, or an answer for a PV that does not exist). */
  wrong: Integer;
  /** CPU seconds the runner (and its children) used between start and done. */
  cpuS?: number;
  peakRssMb?: number;
  /** Every PV's answer; in stored bench results only the failed and wrong ones (`rowsKept`). */
  rows: SnapshotRow[];
  /** Set when `rows` holds only (the first 100 of) the failed and wrong PVs (stored bench results). */
  rowsKept?: 'failures';
  /** How many PVs failed or disagreed, per reason (stored bench results). */
  failureReasons?: Record<string, Integer>;
  /** Elapsed time of the answers, ms (stored bench results, where the rows are dropped). */
  elapsedMs?: { p50: number; p99: number; max: number };
  /** Set when the run passed its per-client deadline and was stopped: seconds from its start. */
  stoppedAfterS?: number;
}

/**
 * The `snapshot` command's document (`snapshot --format json`).
 * @title epicsperf snapshot --format json
 */
export interface SnapshotDocument extends SnapshotOutcome {
  schema: typeof SNAPSHOT_FORMAT;
  /** The timeout of each PV, ms. */
  timeoutMs: number;
  /** Answers that disagree with the referee (with --check). */
  wrong?: Integer;
  /** One entry per PV, in the order of the list. */
  rows: (SnapshotRow & {
    /** The severity's name (NO_ALARM, MINOR, MAJOR, INVALID). */
    severityName?: string;
  })[];
}

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
  client: { name: string; version?: string | undefined },
): Promise<SnapshotRun> {
  const t0 = performance.now();
  const results = await ctx.snapshot(names, { timeout: timeoutMs });
  const wallMs = performance.now() - t0;
  const rows = shippedRows(results as SnapshotResult<TimeReading | PvaReading>[]).map((r, i) => snapshotRow(names[i]!, r));
  const answered = rows.filter((r) => r.ok).length;
  return {
    client: client.name,
    ...(client.version !== undefined && { version: client.version }),
    ok: true,
    wallMs,
    answered,
    failed: rows.length - answered,
    wrong: 0,
    rows,
  };
}
