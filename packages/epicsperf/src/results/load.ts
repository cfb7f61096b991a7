// The load workload's result shapes: N runners of one client on each of M hosts against one IOC,
// N rising step by step; per step the aggregate figures, each host's CPU, the IOC's, the fairness
// between steady PVs and a ramping one, and each runner's outcome; per client how many it served.
import type { Integer } from 'epics-ops';
import type { StealPercent } from './monitor.js';

/** What the load workload ran. */
export interface LoadWorkload {
  /** Runners per host at each step, lowest first. */
  steps: Integer[];
  /** Counters each load runner monitors (PREFIX:CALC1..N). */
  records: Integer;
  /** The counters' update rate, Hz. */
  rateHz: number;
  /** Seconds each step is measured for, after every runner has connected and a one-second warm-up. */
  seconds: number;
  /** PREFIX:RAMP's rate over each step's window, Hz (the ramping PV the fairness runners monitor). */
  rampRatesHz: number[];
  /** A step's latency has grown when its p99 is more than this above the client's first step's, ms. */
  latencyGrowthMs: number;
  /** The servers' load (`--servers`): a row per server and protocol (`node (PVA)`), each with its
   *  protocol's reference client, on this host; the IOC's figures are that server's. */
  servers?: string[];
}

/** A host that ran runners (or the IOC). */
export interface LoadHost {
  name: string;
  address: string;
  cores?: Integer;
}

/** How one runner did at one step. Every runner monitors the counters; the first on each host (its
 *  fairness runner) monitors PREFIX:RAMP after them too. */
export interface LoadRunner {
  host: string;
  /** 1-based, per host. */
  index: Integer;
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
  samples?: Integer;
  /** Its counters' updates per second over the window: the sum of each counter's own rate, its
   *  updates received over the IOC time they span. */
  updatesS?: number;
  /** Counter values it never received (gaps in the counts, from its subscription on). */
  missed?: Integer;
  /** The gaps they were in. */
  gaps?: Integer;
  /** Receive time minus IOC timestamp, every update the IOC published in the window, ms. */
  latencyMs?: { p50: number; p99: number };
  /** A fairness runner: the share of its counters' updates it received over the window. */
  steadyFraction?: number;
  /** A fairness runner: the share of PREFIX:RAMP's updates it received over the window. */
  rampFraction?: number;
  /** A fairness runner: the rate PREFIX:RAMP was published at by its timestamps, Hz. */
  rampPublishedHz?: number;
}

/** What limited a client: updates lost, latency grown, a runner's or a host's CPU saturated, the
 *  IOC saturated, a runner failed; `none` when it held every step. */
export type LoadLimitKind = 'lost' | 'latency' | 'client-cpu' | 'ioc-cpu' | 'failed' | 'none';

export interface LoadStepResult {
  client: string;
  runnersPerHost: Integer;
  /** Load runners on every host: runnersPerHost x hosts. */
  totalClients: Integer;
  /** totalClients x records x rate. */
  offeredUpdatesS: number;
  /** Updates per second all load runners received together. */
  updatesS: number;
  /** Counter values the load runners never received. */
  missed: Integer;
  /** `missed` over all updates. */
  lossFraction: number;
  /** Pooled over every update of every load runner the IOC published in the window, ms. */
  latencyMs?: { p50: number; p99: number };
  /** Per host: its load runners' CPU, how many ran and failed. */
  hosts: {
    host: string;
    /** Its load runners' CPU added up, % of one core. */
    cpuPercent: number;
    runners: Integer;
    failed: Integer;
    cores?: Integer;
  }[];
  /** The IOC's CPU over the window, % of one core. */
  iocCpuPercent?: number;
  /** Counter updates per second the IOC published, by its own count. */
  iocUpdatesS?: number;
  /** The fairness runners averaged. */
  fairness?: {
    /** PREFIX:RAMP's rate asked for, Hz. */
    rampRateHz: number;
    /** The rate PREFIX:RAMP was published at, by the IOC's own count (else by its timestamps), Hz. */
    rampPublishedHz?: number;
    /** Seconds of the window the fairness runners' PREFIX:RAMP updates span (less than the window
     *  when their room for it filled). */
    rampSeconds?: number;
    /** Their counters' delivered fraction. */
    steadyFraction: number;
    /** PREFIX:RAMP's delivered fraction. */
    rampFraction: number;
    /** rampFraction / steadyFraction: 1 = treated alike, below 1 the ramping PV lost more. */
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
  served: Integer;
  /** Runners per host there. */
  bestRunnersPerHost?: Integer;
  /** Updates per second received there. */
  bestUpdatesS?: number;
  /** What stopped it (kind `none`: it held every step, the steps ran out). */
  limit: {
    kind: LoadLimitKind;
    text: string;
    /** The step that did not hold, runners per host. */
    atRunnersPerHost?: Integer;
  };
}

export interface LoadResults {
  workload: LoadWorkload;
  hosts: LoadHost[];
  /** The name of the host the IOC ran on. */
  iocHost: string;
  steps: LoadStepResult[];
  clients: LoadClient[];
  stealPercent?: StealPercent | undefined;
}

/** A step as the reports and the progress name it: `4 x 2 hosts` or `4 runners`. */
export const loadStepLabel = (runnersPerHost: number, hosts: number): string =>
  hosts > 1 ? `${runnersPerHost} x ${hosts} hosts` : `${runnersPerHost} runner${runnersPerHost === 1 ? '' : 's'}`;
