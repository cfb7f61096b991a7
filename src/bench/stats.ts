// Summary statistics quoted in every table: median with min-max, and the mean.
export interface Stat {
  median: number;
  min: number;
  max: number;
  mean: number;
  n: number;
}

export function stat(values: readonly number[]): Stat | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { median, min: v[0]!, max: v[v.length - 1]!, mean: v.reduce((a, b) => a + b, 0) / v.length, n: v.length };
}
