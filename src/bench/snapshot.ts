// The snapshot workload for one client: read every PV once, each against its own timeout, timed
// by the orchestrator from `start` to `done`; each value is then checked against the IOC.
import { Context } from '../client/context.js';
import type { SnapshotResult } from '../client/snapshot.js';
import { RunnerProcess } from './runner.js';
import { RunnerError } from '../errors.js';
import { cpuSeconds, memoryKb } from './procstat.js';
import { runnerCommand, type ClientSpec } from './clients.js';
import { writeNamesFile } from './names.js';
import type { SnapshotRow, SnapshotRun } from '../results/index.js';

export interface SnapshotRunOptions {
  client: ClientSpec;
  python: string;
  env: Record<string, string>;
  names: readonly string[];
  timeoutMs: number;
  /** Check values against reference reads made before and after the run (default true). */
  verify?: boolean;
  /** Deadlines (ms) after which the runner is killed: to be ready, and to finish the snapshot. */
  readyTimeoutMs?: number;
  deadlineMs?: number;
  onProgress?: (text: string) => void;
}

async function reference(env: Record<string, string>, names: readonly string[], timeoutMs: number): Promise<SnapshotResult[]> {
  const ctx = new Context({ env });
  try {
    return await ctx.snapshot(names, { timeout: timeoutMs });
  } finally {
    await ctx.close();
  }
}

function agrees(v: unknown, before: SnapshotResult | undefined, after: SnapshotResult | undefined): boolean {
  const refs = [before, after].filter((r): r is Extract<SnapshotResult, { ok: true }> => !!r?.ok);
  if (refs.length === 0) return false; // answered a PV the IOC does not serve
  const values = refs.map((r) => r.value);
  if (typeof v === 'number' && values.every((x) => typeof x === 'number')) {
    const lo = Math.min(...(values as number[]));
    const hi = Math.max(...(values as number[]));
    return (v >= lo && v <= hi) || (Number.isNaN(v) && values.some((x) => Number.isNaN(x)));
  }
  const norm = (x: unknown) => JSON.stringify(typeof x === 'object' && x !== null && 'length' in x ? Array.from(x as ArrayLike<unknown>) : x);
  return values.some((x) => norm(x) === norm(v));
}

export async function runSnapshot(o: SnapshotRunOptions): Promise<SnapshotRun> {
  const { command, args } = runnerCommand(o.client, o.python);
  const names = writeNamesFile(o.names);
  const progress = o.onProgress ?? (() => {});
  const result: SnapshotRun = { client: o.client.name, ok: false, answered: 0, failed: 0, wrong: 0, rows: [] };
  const verify = o.verify ?? true;
  let before: SnapshotResult[] | undefined;
  const runner = new RunnerProcess(command, [...args, 'snapshot', '--names', names.path, '--timeout-ms', String(o.timeoutMs)], o.env);
  try {
    progress('starting');
    const ready = await runner.next('ready', o.readyTimeoutMs ?? 60_000, 'ready');
    result.version = typeof ready.version === 'string' ? ready.version : undefined;
    if (verify) before = await reference(o.env, o.names, o.timeoutMs);
    progress('reading');
    const cpu0 = cpuSeconds(runner.pid, true) ?? 0;
    const t0 = performance.now();
    runner.send('start');
    const deadline = o.deadlineMs ?? 60_000 + o.timeoutMs * Math.min(o.names.length, 120);
    await runner.next('done', deadline, 'the end of the snapshot');
    result.wallMs = performance.now() - t0;
    const cpu1 = cpuSeconds(runner.pid, true);
    if (cpu1 !== undefined) result.cpuS = cpu1 - cpu0;
    const mem = memoryKb(runner.pid);
    if (mem) result.peakRssMb = mem.peakKb / 1024;
    runner.send('ship');
    const shipped = await runner.next('results', 60_000, 'shipping results');
    const after = verify ? await reference(o.env, o.names, o.timeoutMs) : undefined;
    const raw = JSON.parse((shipped.payload ?? Buffer.from('[]')).toString('utf8')) as Array<Record<string, unknown>>;
    if (raw.length !== o.names.length) throw new RunnerError(`the runner returned ${raw.length} results for ${o.names.length} names`);
    result.rows = raw.map((r, i) => {
      const row: SnapshotRow = { name: o.names[i]!, ok: r.ok === true };
      if (row.ok) {
        row.value = r.value;
        if (typeof r.severity === 'number') row.severity = r.severity;
        if (typeof r.status === 'number') row.status = r.status;
        if (typeof r.timestamp === 'number') row.timestamp = r.timestamp;
        if (verify) row.correct = agrees(r.value, before?.[i], after?.[i]);
      } else row.error = String(r.error ?? 'failed');
      if (typeof r.elapsedMs === 'number') row.elapsedMs = r.elapsedMs;
      return row;
    });
    result.answered = result.rows.filter((r) => r.ok).length;
    result.failed = result.rows.length - result.answered;
    result.wrong = result.rows.filter((r) => r.ok && r.correct === false).length;
    result.ok = result.wrong === 0;
    if (!result.ok) result.error = `${result.wrong} answers disagree with the IOC`;
    progress('done');
    await runner.finish();
  } catch (err) {
    result.error = err instanceof RunnerError ? err.message : `unexpected: ${(err as Error).message}`;
    await runner.kill();
  } finally {
    names.remove();
  }
  return result;
}
