// Option parsers shared by the commands: each turns bad input into commander's one-line usage error.
import { InvalidArgumentError } from 'commander';

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

export function portArg(v: string): number {
  return intArg(1, 65535)(v);
}
