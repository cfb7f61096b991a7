// The latency and crossing workloads' shared shapes: one payload size's round trip (and one way),
// and the line fitted through the sizes (fixed cost and MB/s).
import type { Integer } from 'epics-ops';

/** One array size of a latency run: round trip (put, then the client's own monitor update) and one way. */
export interface LatencyPoint {
  elements: Integer;
  bytes: Integer;
  /** Rounds kept (after the warm-up rounds). */
  updates: Integer;
  /** Round trip: from before the put to the client's callback with its value, ms. */
  p50Ms: number;
  p99Ms: number;
  minMs: number;
  maxMs: number;
  p90Ms?: number;
  /** One way: the update's IOC timestamp to the client's callback (one host, one clock), ms. */
  oneWayP50Ms?: number;
  oneWayP90Ms?: number;
  oneWayP99Ms?: number;
  ok: boolean;
  error?: string;
}

/** Fixed cost and slope of p50 against bytes (least squares), as the ADO bridge study fitted them. */
export interface LatencyFit {
  /** Intercept of p50 against bytes, ms. */
  fixedMs: number;
  /** 1 / slope, MB/s. */
  mbPerS: number;
}
