// The load workload's pure part: what one runner's samples say (rate, loss, latency, fairness),
// a step's figures pooled over its runners, whether the step held and what limited it, and how
// many clients each client's ramp served. No I/O: the unit tests feed it fixtures.
import { checkMonitorSamples, percentile } from './checks.js';
import type { Sample } from './samples.js';
import type { LoadClient, LoadLimitKind, LoadRunner, LoadStepResult } from '../results/index.js';

/** A host or a runner is saturated from this share of its cores (a runner: of one core). */
export const SATURATED = 0.9;
/** The IOC fell short when it published less than this share of the counters' offered rate. */
const IOC_SHORT = 0.9;

export interface RunnerAnalysis {
  /** The row's figures (ok and error are the caller's, from the run and `problem`). */
  figures: Pick<
    LoadRunner,
    'samples' | 'updatesS' | 'missed' | 'gaps' | 'latencyMs' | 'steadyFraction' | 'rampFraction' | 'rampPublishedHz'
  >;
  /** Latency of every update of the window, ms (pooled over the step's runners). */
  latencies: Float64Array;
  /** Counter updates received after each counter's first (the loss's denominator with `missed`). */
  received: number;
  /** A fairness runner: the seconds of the window its PREFIX:RAMP updates span (on the IOC's clock). */
  rampSeconds?: number;
  /** A check other than loss that failed (values going backwards, stale timestamps, a PV silent
   *  after its first update ...); undefined when there is none. */
  problem?: string;
}

export interface AnalyseOptions {
  /** The runner's names, in order. */
  names: readonly string[];
  /** The counters' rate (Hz), for the staleness check. */
  rate: number;
  /** Wall time (POSIX s) when the runner was told to start. */
  startedAt: number;
  /** A fairness runner: the index of PREFIX:RAMP among its names (the PVs before it are steady). */
  rampIndex?: number;
  /** The measured window on the IOC's clock (POSIX s): rate, latency and fairness count the
   *  updates the IOC published in it; without it, every update after each PV's first. */
  window?: readonly [number, number];
  /** The IOC's own count of PREFIX:RAMP's updates in the window: a fairness runner that received
   *  fewer than two of them has the share it received of these (0 when it received none). */
  rampPublished?: number;
}

/** What one runner's samples say: the values it missed (over all of them, from its subscription
 *  on), and over the window its counters' rate, its latency, and for a fairness runner the
 *  delivered fractions of its steady counters and of the ramping PV. */
export function analyseRunner(samples: readonly Sample[], o: AnalyseOptions): RunnerAnalysis {
  const pvs = o.names.length;
  const byPv: Sample[][] = Array.from({ length: pvs }, () => []);
  for (const s of samples) if (s.pv < pvs) byPv[s.pv]!.push(s);
  const ramp = o.rampIndex;
  // Every check of the monitor workload but completeness: the window is timed, not counted. The
  // ramping PV is checked apart: its gaps are the fairness figure, not the step's loss.
  const steadyNames = ramp === undefined ? o.names : o.names.slice(0, ramp);
  const steadySamples = ramp === undefined ? samples : samples.filter((s) => s.pv < ramp);
  const check = checkMonitorSamples(steadySamples, {
    pvs: steadyNames.length,
    samplesPerPv: 2,
    startedAt: o.startedAt,
    periodS: 1 / Math.max(o.rate, 0.1),
    expectedSeverity: 1,
    names: steadyNames,
  });
  // The updates published in the window (never a PV's first, which came with its subscription):
  // the subscriptions' first burst and the other runners' connecting are left out.
  const w = o.window;
  const win = byPv.map((list) => list.slice(1).filter((s) => !w || (s.iocTime >= w[0] && s.iocTime <= w[1])));
  const latencies = new Float64Array(win.reduce((a, l) => a + l.length, 0));
  let k = 0;
  let updatesS = 0;
  for (const [pv, list] of win.entries()) {
    for (const s of list) latencies[k++] = (s.recvTime - s.iocTime) * 1000;
    // Each counter's own rate: its updates received over the IOC time they span (one clock for
    // every runner; a backlog received in a burst does not count faster than it was published).
    if (pv !== ramp && list.length >= 2) {
      const span = list[list.length - 1]!.iocTime - list[0]!.iocTime;
      if (span > 0) updatesS += (list.length - 1) / span;
    }
  }
  const sorted = Float64Array.from(latencies).sort();
  let received = 0;
  for (const [pv, list] of byPv.entries()) if (pv !== ramp) received += Math.max(0, list.length - 1);
  let rampSeconds: number | undefined;
  const figures: RunnerAnalysis['figures'] = {
    samples: samples.length,
    updatesS,
    missed: check.missedValues,
    gaps: check.gaps,
    ...(sorted.length > 0 && { latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) } }),
  };
  if (ramp !== undefined) {
    const steady = delivered(win.slice(0, ramp));
    const r = delivered([win[ramp] ?? []]);
    if (steady.expected > 0) figures.steadyFraction = steady.received / steady.expected;
    if (r.expected > 0) figures.rampFraction = r.received / r.expected;
    else if ((o.rampPublished ?? 0) > 0) figures.rampFraction = (win[ramp]?.length ?? 0) / o.rampPublished!;
    // Its rate by its timestamps.
    const list = win[ramp] ?? [];
    const first = list[0];
    const last = list[list.length - 1];
    if (first && last && last.iocTime > first.iocTime) {
      figures.rampPublishedHz = (last.value - first.value) / (last.iocTime - first.iocTime);
      rampSeconds = last.iocTime - first.iocTime;
    }
  }
  const failed =
    check.silentPvs + check.incompletePvs + check.valueErrors + check.timestampErrors + check.staleTimestamps + check.severityErrors;
  const problem =
    failed > 0
      ? `sample check failed: ${check.findings
          .filter((f) => !/ missed\)$| more gap findings$/.test(f))
          .slice(0, 2)
          .join('; ')}`
      : undefined;
  return { figures, latencies, received, ...(rampSeconds !== undefined && { rampSeconds }), ...(problem && { problem }) };
}

/** Updates received after each list's first, against the values its counts moved through. */
function delivered(lists: readonly Sample[][]): { received: number; expected: number } {
  let received = 0;
  let expected = 0;
  for (const list of lists) {
    if (list.length < 2) continue;
    received += list.length - 1;
    expected += Math.max(list.length - 1, list[list.length - 1]!.value - list[0]!.value);
  }
  return { received, expected };
}

/** Percentiles of latencies pooled over runners (undefined when there is none). */
export function pooledLatency(parts: readonly Float64Array[]): { p50: number; p99: number } | undefined {
  const n = parts.reduce((a, p) => a + p.length, 0);
  if (n === 0) return undefined;
  const all = new Float64Array(n);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  all.sort();
  return { p50: percentile(all, 50), p99: percentile(all, 99) };
}

export interface JudgeOptions {
  /** The client's first step (its latency is the baseline); undefined at the first step itself. */
  first?: LoadStepResult | undefined;
  latencyGrowthMs: number;
  /** The counters' rate the IOC was asked for (records x rate), updates/s. */
  iocOfferedUpdatesS: number;
  iocHost: string;
  /** Cores of each host, where known. */
  cores: Readonly<Record<string, number | undefined>>;
}

const n = (v: number) => Math.round(v).toLocaleString('en-US');
const ms = (v: number) => `${v.toFixed(v >= 100 ? 0 : 1)} ms`;

/** Whether a step held (no update lost, p99 latency not grown past the first step's by the
 *  threshold, no runner failed) and, if not, what limited it. */
export function judgeLoadStep(s: Omit<LoadStepResult, 'held' | 'limit'>, o: JudgeOptions): Pick<LoadStepResult, 'held' | 'limit'> {
  const failed = s.runners.filter((r) => !r.ok);
  if (failed.length > 0) {
    const why = failed[0]!;
    return {
      held: false,
      limit: {
        kind: 'failed',
        text: `${failed.length} of ${s.runners.length} runners failed (${why.host} #${why.index}: ${why.error ?? 'failed'})`,
      },
    };
  }
  const symptoms: string[] = [];
  let kind: LoadLimitKind | undefined;
  if (s.missed > 0) {
    kind = 'lost';
    symptoms.push(`lost ${n(s.missed)} updates (${(100 * s.lossFraction).toFixed(s.lossFraction >= 0.01 ? 1 : 2)}%)`);
  }
  const base = o.first?.latencyMs?.p99;
  const p99 = s.latencyMs?.p99;
  if (base !== undefined && p99 !== undefined && p99 > base + o.latencyGrowthMs) {
    kind ??= 'latency';
    symptoms.push(`p99 latency ${ms(p99)}, more than ${ms(o.latencyGrowthMs)} above the first step's ${ms(base)}`);
  }
  if (kind === undefined) return { held: true };
  const cause = saturation(s, o);
  return {
    held: false,
    limit: { kind: cause?.kind ?? kind, text: `${symptoms.join('; ')}: ${cause?.text ?? `no CPU saturated (${cpuText(s, o)})`}` },
  };
}

/** Where the CPU went at a step: each host's clients (and the IOC on its host), of its cores. */
function cpuText(s: Omit<LoadStepResult, 'held' | 'limit'>, o: JudgeOptions): string {
  const ioc = s.iocCpuPercent;
  const parts = s.hosts.map((h) => {
    const cores = o.cores[h.host];
    const withIoc = h.host === o.iocHost && ioc !== undefined ? `, IOC ${n(ioc)}%` : '';
    return `${h.host}: clients ${n(h.cpuPercent)}%${withIoc}${cores !== undefined ? ` of ${cores * 100}%` : ''}`;
  });
  if (!s.hosts.some((h) => h.host === o.iocHost) && ioc !== undefined) parts.push(`IOC ${n(ioc)}%`);
  return parts.join('; ');
}

/** The resource that was saturated at a step, if one was: the IOC (short of its rate, or every
 *  core of its host), a host's cores (its clients and the IOC if it runs there; the larger user
 *  is named the limit), or a single runner's core. */
function saturation(s: Omit<LoadStepResult, 'held' | 'limit'>, o: JudgeOptions): { kind: LoadLimitKind; text: string } | undefined {
  const ioc = s.iocCpuPercent ?? 0;
  const iocCores = o.cores[o.iocHost];
  if (s.iocUpdatesS !== undefined && s.iocUpdatesS < IOC_SHORT * o.iocOfferedUpdatesS) {
    return {
      kind: 'ioc-cpu',
      text: `the IOC published ${n(s.iocUpdatesS)} of ${n(o.iocOfferedUpdatesS)} counter updates/s (CPU ${n(ioc)}%)`,
    };
  }
  if (iocCores !== undefined && ioc >= SATURATED * iocCores * 100) {
    return { kind: 'ioc-cpu', text: `the IOC used ${n(ioc)}% of ${iocCores * 100}%` };
  }
  for (const h of s.hosts) {
    const cores = o.cores[h.host];
    if (cores === undefined) continue;
    const withIoc = h.host === o.iocHost ? ioc : 0;
    if (h.cpuPercent + withIoc >= SATURATED * cores * 100) {
      const text = `host ${h.host}'s CPU saturated (clients ${n(h.cpuPercent)}%${withIoc ? `, IOC ${n(withIoc)}%` : ''} of ${cores * 100}%)`;
      return { kind: withIoc > h.cpuPercent ? 'ioc-cpu' : 'client-cpu', text };
    }
  }
  const busy = s.runners.filter((r) => (r.cpuPercent ?? 0) >= SATURATED * 100);
  if (busy.length > 0) {
    const top = Math.max(...busy.map((r) => r.cpuPercent ?? 0));
    return { kind: 'client-cpu', text: `${busy.length} runner${busy.length === 1 ? '' : 's'} at a full core (up to ${n(top)}%)` };
  }
  return undefined;
}

/** How many clients a client's ramp served: the load runners at its highest step held, and what
 *  stopped it (or that it held every step). Its steps are in ramp order, as run. */
export function loadClient(client: string, steps: readonly LoadStepResult[], planned: number): LoadClient {
  const mine = steps.filter((x) => x.client === client);
  const past = mine.find((x) => !x.held);
  const held = mine.filter((x) => x.held && (!past || x.runnersPerHost < past.runnersPerHost));
  const best = held[held.length - 1];
  const limit: LoadClient['limit'] = past
    ? { kind: past.limit?.kind ?? 'failed', text: past.limit?.text ?? 'failed', atRunnersPerHost: past.runnersPerHost }
    : mine.length === planned && best
      ? { kind: 'none', text: `held every step (up to ${n(best.totalClients)} clients): the limit is above the ramp` }
      : { kind: 'failed', text: `ran ${mine.length} of ${planned} steps` };
  return {
    client,
    served: best?.totalClients ?? 0,
    ...(best && { bestRunnersPerHost: best.runnersPerHost, bestUpdatesS: best.updatesS }),
    limit,
  };
}
