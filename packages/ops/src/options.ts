// The options the operator commands share (and the benchmark tool's commands too): numbers,
// the output format, the per-PV timeout. A bad value is commander's one-line usage error.
import { InvalidArgumentError, Option } from 'commander';

/** Each PV's timeout when none is given, ms. */
export const DEFAULT_TIMEOUT_MS = 1000;

export function intArg(min: number, max = Number.MAX_SAFE_INTEGER): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!/^\s*-?\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}.`);
    return n;
  };
}

export function numberArg(min: number, opts: { exclusiveMin?: boolean } = {}): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || (opts.exclusiveMin && n === min))
      throw new InvalidArgumentError(`expected a number ${opts.exclusiveMin ? '>' : '>='} ${min}.`);
    return n;
  };
}

export function formatOption<T extends string>(choices: readonly T[]): Option {
  return new Option('--format <format>', 'output format').choices(choices).default(choices[0]);
}

export const timeoutOption = (): Option =>
  new Option('--timeout <ms>', 'timeout of each PV, in milliseconds').argParser(intArg(1, 3_600_000)).default(DEFAULT_TIMEOUT_MS);
