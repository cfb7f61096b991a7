// A monitor run's result shape (the monitor, array and headroom workloads make them) and the
// figures and checks in it, and the `monitor` command's document of one; `stat`, the summary
// every workload's figures use.
import type { Integer } from 'epics-ops';

/** The format of `monitor --format json`'s document, written in its `schema` field. */
export const MONITOR_FORMAT = 'epicsperf/monitor@1';

export interface Stat {
  median: number;
  min: number;
  max: number;
  mean: number;
  n: Integer;
}

/** Percent of the machine's CPU time a hypervisor gave other guests while a workload ran (a loaded
 *  host makes times longer; procstat's stealMeter). @internal */
export type StealPercent = number;

/** Median, min-max and mean of the finite values (undefined when there is none). */
export function stat(values: readonly number[]): Stat | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { median, min: v[0]!, max: v[v.length - 1]!, mean: v.reduce((a, b) => a + b, 0) / v.length, n: v.length };
}

export interface MonitorCheck {
  pvs: Integer;
  /** PVs that delivered no sample at all. */
  silentPvs: Integer;
  /** PVs with fewer samples than asked. */
  incompletePvs: Integer;
  samples: Integer;
  /** Places where the value jumped by more than 1 ... */
  gaps: Integer;
  /** ... and the values skipped there in total. */
  missedValues: Integer;
  /** Values that repeated or went backwards. */
  valueErrors: Integer;
  /** Timestamps that did not strictly increase. */
  timestampErrors: Integer;
  /** Timestamps older than the run (a stale or cached value) or in the future. */
  staleTimestamps: Integer;
  /** Samples whose severity was not the expected one. */
  severityErrors: Integer;
  /** Receive time minus IOC timestamp of every update after the first, ms. */
  latencyMs: { p50: number; p99: number; max: number } | undefined;
  /** Updates per second over the whole collection. */
  updatesPerSecond: number;
  /** Human-readable findings, at most a few per kind. */
  findings: string[];
  ok: boolean;
}

export interface ArrayCheck {
  updates: Integer;
  /** Elements of the waveform. */
  elements: Integer;
  /** Updates the IOC made that the client never saw (the value jumped by more than 1). */
  skipped: Integer;
  /** Updates whose probe elements (or, in a full check, any element) disagreed with the first
   *  element, or whose length was not the workload's. */
  corrupt: Integer;
  /** The first few corrupt updates: which one (1-based, in arrival order), its first element, and what was wrong. */
  corruptUpdates?: string[];
  /** Updates that carried the same content again. RSRV reads a large array when it sends it, not
   *  when it was posted, so under backlog queued updates carry the newest content with their own
   *  timestamps: a server effect, not a client error. */
  repeats: Integer;
  /** Updates whose value went backwards. */
  valueErrors: Integer;
  /** Elements received per second, in millions, over the updates after the first. */
  mElementsPerSecond: number;
  updatesPerSecond: number;
  latencyMs: { p50: number; p99: number } | undefined;
  /** What the IOC published over the same run, counted on its side (updates and M elements per
   *  second), and the client's updates/s as a fraction of it. */
  server?: {
    updatesPerSecond: number;
    mElementsPerSecond: number;
    /** The client's updates/s divided by the IOC's (1.0: it kept up). */
    fraction: number;
  };
  ok: boolean;
}

export interface MonitorRun {
  client: string;
  /** The host it ran on (a name of `hosts`), when not the orchestrator's. */
  host?: string;
  version?: string;
  /** Every sample passed every check. */
  ok: boolean;
  error?: string;
  /** From `start` until every PV delivered its first update, ms. */
  connectMs?: number;
  /** From `start` until every PV had its samples, s. */
  collectS?: number;
  /** CPU of the runner process (all threads), % of one core, sampled once a second after the
   *  warm-up, `samples` holding each (one figure over the whole collection when it ended before
   *  the first sample). */
  cpuPercent?: Stat & { samples: number[] };
  /** CPU of the IOC over the same window, % of one core. */
  iocCpuPercent?: Stat;
  /** Peak resident memory of the runner process, MiB. */
  peakRssMb?: number;
  check?: MonitorCheck;
  /** The array workload's figures and checks. */
  array?: ArrayCheck;
  /** Set when the run passed its per-client deadline and was stopped: seconds from its start. */
  stoppedAfterS?: number;
}

/**
 * The `monitor` command's document (`monitor --format json`); each item of a bench run's
 * `monitor.runs` is its `run`.
 * @title epicsperf monitor --format json
 */
export interface MonitorDocument {
  schema: typeof MONITOR_FORMAT;
  /** The command's options, by name. */
  options: Record<string, unknown>;
  run: MonitorRun;
}
