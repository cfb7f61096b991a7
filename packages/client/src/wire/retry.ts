// The search retry schedule both protocols use: a delay that starts near the round trip and
// doubles per attempt up to a cap (libca's and pvxs's shape).

/**
 * Delay before search attempt `attempt` (0 = first retry after the initial send), in ms: starts
 * near the round-trip estimate and doubles per attempt, capped at `maxPeriodMs`.
 */
export function searchRetryDelay(attempt: number, maxPeriodMs: number, baseMs = 32): number {
  const d = baseMs * 2 ** Math.min(attempt, 30);
  return Math.min(d, maxPeriodMs);
}
