// The headroom workload's result shapes: scalar monitors at rising (records x rate) steps, each
// client's runs, the highest step it held with no loss, and what it did past that point; and the
// two pure readings of them that the reports share (a step's label, a held step's rate).
import type { Integer } from 'epics-ops';
import type { MonitorRun, StealPercent } from './monitor.js';

/** One load step: `records` counters, each updated at `rateHz`. */
export interface HeadroomStep {
  /** Counters monitored. */
  records: Integer;
  /** Each counter's update rate. */
  rateHz: number;
  /** records x rate. */
  offeredUpdatesS: number;
}

export interface HeadroomWorkload {
  /** Seconds of updates each client receives at each step (samples per PV = rate x seconds). */
  seconds: number;
  steps: HeadroomStep[];
  /** The servers' headroom instead of the clients' (`--servers`): each server's app posts the
   *  counters at each step, to `fanout` reference clients at once; a row per server, protocol and fan-out. */
  servers?: { names: string[]; fanout: Integer[] };
}

/** How a client gave way at a step: it lost updates (dropped, or merged by the server when it fell
 *  behind), its latency grew through the step, it grew past the memory limit and was killed, it
 *  was stopped at its deadline, or it failed (crashed, a check failed); a server also gives way
 *  when its app posted less than 90% of the offered rate (short). */
export type HeadroomFailureMode = 'lost' | 'behind' | 'memory' | 'stopped' | 'failed' | 'short';

export interface HeadroomStepResult {
  /** The client, or with servers, the row: `node (PVA)`, `node (PVA) x 4`. */
  client: string;
  /** With servers: the server, its protocol and how many reference clients monitored it at once
   *  (each must hold the step; `run` is the first that did not, else the first). */
  server?: { name: string; protocol: 'CA' | 'PVA'; fanout: Integer; version?: string };
  step: HeadroomStep;
  run: MonitorRun;
  /** What the IOC published over the client's collection, counted on its side (counter ticks it
   *  processed x records, per second). */
  iocUpdatesS?: number;
  /** The IOC published less than 90% of the offered rate, or used 90% of every core: the step measured the IOC, not the client. */
  iocLimited: boolean;
  /** Median latency (receive time minus IOC timestamp) over the first quarter of the step's updates, ms. */
  latencyEarlyMs?: number;
  /** The same over the last quarter, ms. */
  latencyLateMs?: number;
  /** No update lost, latency not growing, every check passed. */
  held: boolean;
  failure?: { mode: HeadroomFailureMode; text: string };
}

export interface HeadroomClient {
  client: string;
  /** The highest step held (undefined: not even the first). */
  best?: HeadroomStepResult;
  /** The first step not held, when there was one. */
  past?: HeadroomStepResult;
  /** Held every step of the ramp. */
  heldAll: boolean;
}

export interface HeadroomResults {
  workload: HeadroomWorkload;
  runs: HeadroomStepResult[];
  clients: HeadroomClient[];
  /** The highest rate the IOC published at any step, updates/s. */
  iocMaxUpdatesS?: number;
  stealPercent?: StealPercent | undefined;
}

/** A step as the reports and the progress name it: `1,000 x 10 Hz`. */
export const headroomStepLabel = (s: HeadroomStep) => `${s.records.toLocaleString('en-US')} x ${s.rateHz} Hz`;

/** The loss-free rate of a held step: what the IOC published (the client received all of it), or
 *  the client's own receive rate when the IOC was not asked. */
export function heldRate(r: HeadroomStepResult | undefined): number | undefined {
  if (!r) return undefined;
  return r.iocUpdatesS ?? r.run.check?.updatesPerSecond;
}
