// The load workload's result shapes: N runners of one client on each of M hosts against one IOC,
// N rising step by step; per step the aggregate figures, each host's CPU, the IOC's, the fairness
// between steady PVs and a ramping one, and each runner's outcome; per client how many it served.

/** What the load workload ran. */
export interface LoadWorkload {
  /** Runners per host at each step, lowest first. */
  steps: number[];
  /** Counters each load runner monitors (PREFIX:CALC1..N). */
  records: number;
  /** The counters' update rate, Hz. */
  rateHz: number;
  /** Seconds each step is measured for, after every runner has connected and a one-second warm-up. */
  seconds: number;
  /** PREFIX:RAMP's rate over each step's window, Hz (the ramping PV the fairness runners monitor). */
  rampRatesHz: number[];
  /** A step's latency has grown when its p99 is more than this above the client's first step's, ms. */
  latencyGrowthMs: number;
}

/** A host that ran runners (or the IOC). */
export interface LoadHost {
  name: string;
  address: string;
  cores?: number;
}

/** How one runner did at one step. Every runner monitors the counters; the first on each host (its
 *  fairness runner) monitors PREFIX:RAMP after them too. */
export interface LoadRunner {
  host: string;
  /** 1-based, per host. */
  index: number;
  /** The host's fairness runner: it monitors PREFIX:RAMP too. */
  ramp?: boolean;
  ok: boolean;
  /** Why it failed (it crashed, did not connect, a check failed, it was killed). */
  error?: string;
  version?: string;
  /** From `start` until all its PVs had delivered an update, ms. */
  connectMs?: number;
  /** Its CPU over the step's window, % of one core (measured on its host). */
  cpuPercent?: number;
  peakRssMb?: number;
  /** Updates it received. */
  samples?: number;
  /** Its counters' updates per second over the window: the sum of each counter's own rate, its
   *  updates received over the IOC time they span. */
  updatesS?: number;
  /** Counter values it never received (gaps in the counts, from its subscription on), and in how many gaps. */
  missed?: number;
  gaps?: number;
  /** Receive time minus IOC timestamp, every update the IOC published in the window, ms. */
  latencyMs?: { p50: number; p99: number };
  /** A fairness runner: the share of its counters' and of PREFIX:RAMP's updates it received over
   *  the window, and the rate PREFIX:RAMP was published at by its timestamps (Hz). */
  steadyFraction?: number;
  rampFraction?: number;
  rampPublishedHz?: number;
}

/** What limited a client: updates lost, latency grown, a runner's or a host's CPU saturated, the
 *  IOC saturated, a runner failed; `none` when it held every step. */
export type LoadLimitKind = 'lost' | 'latency' | 'client-cpu' | 'ioc-cpu' | 'failed' | 'none';

export interface LoadStepResult {
  client: string;
  runnersPerHost: number;
  /** Load runners on every host: runnersPerHost x hosts. */
  totalClients: number;
  /** totalClients x records x rate. */
  offeredUpdatesS: number;
  /** Updates per second all load runners received together. */
  updatesS: number;
  /** Counter values the load runners never received, and their share of all updates. */
  missed: number;
  lossFraction: number;
  /** Pooled over every update of every load runner the IOC published in the window, ms. */
  latencyMs?: { p50: number; p99: number };
  /** Per host: its load runners' CPU added up (% of one core), how many ran and failed. */
  hosts: { host: string; cpuPercent: number; runners: number; failed: number; cores?: number }[];
  /** The IOC's CPU over the window (% of one core) and what it published (counter updates/s, its
   *  own count). */
  iocCpuPercent?: number;
  iocUpdatesS?: number;
  /** The fairness runners averaged: their counters' and PREFIX:RAMP's delivered fractions, and the
   *  ratio (ramp / steady: 1 = treated alike, below 1 the ramping PV lost more); the ramp's rate
   *  by the IOC's own count (else by its timestamps); the seconds of the window their PREFIX:RAMP
   *  updates span (less than the window when their room for it filled). */
  fairness?: {
    rampRateHz: number;
    rampPublishedHz?: number;
    rampSeconds?: number;
    steadyFraction: number;
    rampFraction: number;
    ratio: number;
  };
  /** Why the step has no fairness figure: the ramp's rate could not be put to the IOC, or reached it too late. */
  rampError?: string;
  runners: LoadRunner[];
  /** No update lost, latency not grown, no runner failed. */
  held: boolean;
  /** Why the ramp stopped here (when it did not hold). */
  limit?: { kind: LoadLimitKind; text: string };
  /** Seconds of the measured window (after every runner connected and the warm-up). */
  windowS?: number;
}

export interface LoadClient {
  client: string;
  /** Load runners at the highest step held (0: not even the first). */
  served: number;
  /** Runners per host there. */
  bestRunnersPerHost?: number;
  /** Updates per second received there. */
  bestUpdatesS?: number;
  /** What stopped it (kind `none`: it held every step, the steps ran out). */
  limit: { kind: LoadLimitKind; text: string; atRunnersPerHost?: number };
}

export interface LoadResults {
  workload: LoadWorkload;
  hosts: LoadHost[];
  /** The name of the host the IOC ran on. */
  iocHost: string;
  steps: LoadStepResult[];
  clients: LoadClient[];
  stealPercent?: number | undefined;
}

/** A step as the reports and the progress name it: `4 x 2 hosts` or `4 runners`. */
export const loadStepLabel = (runnersPerHost: number, hosts: number): string =>
  hosts > 1 ? `${runnersPerHost} x ${hosts} hosts` : `${runnersPerHost} runner${runnersPerHost === 1 ? '' : 's'}`;
