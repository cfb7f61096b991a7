// The crossing workload's result shapes (`bench crossing`): the time from a server app's post to a
// reference client's callback, per server, protocol and payload, with the fixed cost and MB/s
// fitted through the array sizes, as the ADO bridge study measured it (T5 - T3).
import type { Integer } from 'epics-ops';
import type { LatencyFit, LatencyPoint } from './latency.js';
import type { StealPercent } from './monitor.js';

export interface CrossingWorkload {
  /** The servers asked for, in order. */
  servers: string[];
  /** Sizes of the int32 arrays, elements. */
  int32Sizes: Integer[];
  /** Sizes of the byte (int8) arrays, elements. */
  byteSizes: Integer[];
  /** Posts per payload (after none that are not kept: the first update, the value at subscription, is not a post). */
  count: Integer;
  /** Time between two posts, ms. */
  periodMs: number;
  /** Sizes (doubles) of the round trip through the app (a put, the app's handler posting it, the
   *  client's own update), `count` rounds each; none: not measured. */
  roundTripSizes?: Integer[];
}

export type CrossingPayload = 'double' | 'int32' | 'bytes';

/** One payload of one server and protocol: the crossing times of its posts. */
export interface CrossingPoint {
  payload: CrossingPayload;
  elements: Integer;
  bytes: Integer;
  /** Posts whose update reached the client (each once, in order). */
  updates: Integer;
  /** Posts not received whose value a later update carried: merged into it by the server or the
   *  client (squashing updates its receiver is behind on, as EPICS monitors may). Not an error. */
  merged?: Integer;
  /** The crossing times' percentiles and range, ms (none when no post arrived). */
  p50Ms?: number;
  p90Ms?: number;
  p99Ms?: number;
  minMs?: number;
  maxMs?: number;
  ok: boolean;
  error?: string;
}

export interface CrossingRun {
  server: string;
  protocol: 'CA' | 'PVA';
  /** The reference client that received the updates. */
  client: string;
  /** The server's library version, as its runner named it. */
  version?: string;
  ok: boolean;
  error?: string;
  /** The server cannot run here (not installed, failed to build, not of this protocol); `error` says why. */
  unsupported?: boolean;
  points: CrossingPoint[];
  /** Fixed cost and MB/s through the sizes of each array payload (as `bench latency` fits them). */
  fit?: { int32?: LatencyFit; bytes?: LatencyFit };
  /** The round trip through the app, per size: the client's `latency` task against the server. */
  roundTrip?: LatencyPoint[];
}

export interface CrossingResults {
  workload: CrossingWorkload;
  runs: CrossingRun[];
  stealPercent?: StealPercent | undefined;
}
