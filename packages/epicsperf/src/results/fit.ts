// The line fitted through a workload's payload sizes (latency, crossing): fixed cost and MB/s.

/** Fixed cost and slope of p50 against bytes (least squares), as the ADO bridge study fitted them. */
export interface LatencyFit {
  /** Intercept of p50 against bytes, ms. */
  fixedMs: number;
  /** 1 / slope, MB/s. */
  mbPerS: number;
}
