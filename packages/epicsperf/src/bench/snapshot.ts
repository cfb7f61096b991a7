// The snapshot workload for one client: read every PV once, each against its own timeout, timed
// by the orchestrator from `start` to `done`; each value is then checked against a neutral
// referee: reads made by the C runner on libca (never by the client being measured).
import { RunnerError } from '../errors.js';
import { findClient, REFEREE, type ClientSpec } from '../clients/index.js';
import type { Host } from '../hosts/host.js';
import { LocalHost } from '../hosts/local-host.js';
import { runOnce } from '../launch/run.js';
import type { SnapshotRow, SnapshotRun } from '../results/index.js';
import { snapshotRow, type ShippedRow } from 'epics-ops';

export interface SnapshotRunOptions {
  client: ClientSpec;
  python: string;
  /** Where the runner (and the referee) run (default: here). */
  host?: Host;
  env: Record<string, string>;
  names: readonly string[];
  timeoutMs: number;
  /** Check values against the referee's reads made before and after the run (default true). */
  verify?: boolean;
  /** Deadlines (ms) after which the runner is killed: to be ready, and to finish the snapshot. */
  readyTimeoutMs?: number;
  deadlineMs?: number;
  /** The client's deadline for the whole run (ms): past it the runner is stopped (ClientDeadline). */
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
  /** The names the referee found unserved on earlier runs against the same IOC: its reads before
   *  the next run leave them out rather than wait the timeout on them again (a workload's runs
   *  share one). */
  unservedNames?: Set<string>;
}

/**
 * The referee's reads of `names` (one row per name), or why it could not read. After the run
 * the referee reads only the names the client answered, with at least 2 s each, so names
 * missing from the IOC do not hold libca's searches back.
 */
async function refereeReads(o: SnapshotRunOptions, names: readonly string[], timeoutMs: number): Promise<SnapshotRow[] | string> {
  if (names.length === 0) return [];
  const run = await runSnapshot({
    ...o,
    client: findClient(REFEREE)!,
    names,
    timeoutMs,
    verify: false,
    clientDeadlineMs: undefined,
    onProgress: () => {},
  });
  return run.rows.length === names.length ? run.rows : `the referee (${REFEREE}) could not read: ${run.error ?? 'no results'}`;
}

/**
 * The referee's timeout for `n` names, at least `minMs`: 0.1 ms a name. libca's searches slow down
 * behind names the IOC does not serve (of 100,000 names with 95 missing it answered 27,000 in 1 s,
 * all in 6 s), and a name it cannot read in time leaves its check open (before) or failed (after).
 */
const refereeTimeoutMs = (minMs: number, n: number): number => Math.max(minMs, Math.ceil(n / 10));

/**
 * Whether a client's answer agrees with the referee: a number within the range the referee read
 * before and after (counters move meanwhile; a missing "before" read leaves the range open
 * below), anything else equal to one of its reads. A name the referee could not read afterwards
 * was answered although the IOC does not serve it.
 */
function agrees(v: unknown, before: SnapshotRow | undefined, after: SnapshotRow | undefined): boolean {
  if (!after?.ok) return false;
  const values = [before, after].filter((r) => r?.ok).map((r) => r!.value);
  if (typeof v === 'number' && values.every((x) => typeof x === 'number')) {
    const hi = Math.max(...(values as number[]));
    const lo = before?.ok ? Math.min(...(values as number[])) : -Infinity;
    return v >= lo && v <= hi;
  }
  const norm = (x: unknown) =>
    JSON.stringify(typeof x === 'object' && x !== null && 'length' in x ? Array.from(x as ArrayLike<unknown>) : x);
  return values.some((x) => norm(x) === norm(v));
}

/**
 * The referee's reads before a run, a row per name: names it found unserved on earlier runs
 * (`o.unservedNames`) are not read again and count as unread, which leaves their check open below as
 * any unread name does; the names it cannot read now join them.
 */
async function readBefore(o: SnapshotRunOptions): Promise<(SnapshotRow | undefined)[] | string> {
  const unservedNames = o.unservedNames ?? new Set<string>();
  const names = o.names.filter((n) => !unservedNames.has(n));
  const reads = await refereeReads(o, names, refereeTimeoutMs(o.timeoutMs, names.length));
  if (typeof reads === 'string') return reads;
  const byName = new Map(names.map((n, i) => [n, reads[i]!]));
  for (const r of reads) if (!r.ok) unservedNames.add(r.name);
  return o.names.map((n) => byName.get(n));
}

export async function runSnapshot(o: SnapshotRunOptions): Promise<SnapshotRun> {
  const host = o.host ?? new LocalHost(o.python);
  const result: SnapshotRun = {
    client: o.client.name,
    ok: false,
    answered: 0,
    failed: 0,
    wrong: 0,
    rows: [],
    ...(o.host && { host: o.host.name }),
  };
  const verify = o.verify ?? true;
  let before: (SnapshotRow | undefined)[] | undefined;
  const runner = host.startRunner({
    client: o.client.name,
    task: 'snapshot',
    names: o.names,
    args: ['--timeout-ms', String(o.timeoutMs)],
    env: o.env,
  });
  return runOnce(runner, result, { deadlineMs: o.clientDeadlineMs, onProgress: o.onProgress }, async (progress) => {
    progress('starting');
    // The referee reads while the client starts: both end before the client is told to start.
    const beforeReads = verify ? readBefore(o) : undefined;
    const ready = await runner.next('ready', o.readyTimeoutMs ?? 60_000, 'ready');
    result.version = typeof ready.version === 'string' ? ready.version : undefined;
    if (beforeReads) {
      const reads = await beforeReads;
      if (typeof reads === 'string') result.unchecked = reads;
      else before = reads;
    }
    progress(`reading ${o.names.length} names`);
    const cpu0 = runner.meter.read()?.treeCpuS ?? 0;
    const t0 = performance.now();
    runner.send('start');
    const doneMs = o.deadlineMs ?? 60_000 + o.timeoutMs * Math.min(o.names.length, 120);
    await runner.next('done', doneMs, 'the end of the snapshot');
    result.wallMs = performance.now() - t0;
    const end = runner.meter.read();
    if (end) {
      result.cpuS = end.treeCpuS - cpu0;
      result.peakRssMb = end.peakKb / 1024;
    }
    progress('checking');
    runner.send('ship');
    const shipped = await runner.next('results', 60_000, 'shipping results');
    const raw = JSON.parse((shipped.payload ?? Buffer.from('[]')).toString('utf8')) as ShippedRow[];
    if (raw.length !== o.names.length) throw new RunnerError(`the runner returned ${raw.length} results for ${o.names.length} names`);
    let after: (SnapshotRow | undefined)[] | undefined;
    if (before) {
      const answered = raw.flatMap((r, i) => (r.ok === true ? [i] : []));
      const reads = await refereeReads(
        o,
        answered.map((i) => o.names[i]!),
        refereeTimeoutMs(Math.max(o.timeoutMs, 2000), answered.length),
      );
      if (typeof reads === 'string') result.unchecked = reads;
      else {
        after = new Array(o.names.length);
        answered.forEach((i, k) => (after![i] = reads[k]));
      }
    }
    const check = before !== undefined && after !== undefined;
    result.rows = raw.map((r, i) => {
      const row = snapshotRow(o.names[i]!, r);
      if (row.ok && check) row.correct = agrees(r.value, before![i], after![i]);
      return row;
    });
    result.answered = result.rows.filter((r) => r.ok).length;
    result.failed = result.rows.length - result.answered;
    result.wrong = result.rows.filter((r) => r.ok && r.correct === false).length;
    result.ok = result.wrong === 0;
    if (!result.ok) result.error = `${result.wrong} answers disagree with the IOC`;
    progress('done');
  });
}
