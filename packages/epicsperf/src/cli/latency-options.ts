// The latency workload's options, shared by `epicsperf latency` and `epicsperf bench latency`:
// the array sizes, the element type (double, or char for byte arrays) and rounds per size.
import { InvalidArgumentError, Option } from 'commander';
import { DEFAULT_LATENCY_SIZES, LATENCY_TYPES } from '../bench/latency.js';
import { intArg } from './options.js';

/** Largest latency array: the IOC's target records are this long, CA's array limit follows. */
export const MAX_LATENCY_ELEMENTS = 10_000_000;

export function parseSizes(v: string): number[] {
  const sizes = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (sizes.length === 0) throw new InvalidArgumentError('give at least one size');
  for (const s of sizes) {
    if (!Number.isInteger(s) || s < 1 || s > MAX_LATENCY_ELEMENTS)
      throw new InvalidArgumentError(`sizes are whole numbers from 1 to ${MAX_LATENCY_ELEMENTS}, got ${s}`);
  }
  if (new Set(sizes).size !== sizes.length) throw new InvalidArgumentError('a size is listed twice');
  return sizes;
}

export const sizesOption = (flag = '--sizes'): Option =>
  new Option(`${flag} <list>`, 'latency: array sizes in elements, comma-separated')
    .argParser(parseSizes)
    .default(DEFAULT_LATENCY_SIZES, DEFAULT_LATENCY_SIZES.join(','));
export const latencyTypeOption = (flag = '--type'): Option =>
  new Option(`${flag} <type>`, 'latency: element type, double or char (byte arrays)').choices([...LATENCY_TYPES]).default('double');
export const countOption = (flag = '--count'): Option =>
  new Option(`${flag} <n>`, 'latency: rounds per size (after 3 that are not kept)').argParser(intArg(1, 100_000)).default(200);
