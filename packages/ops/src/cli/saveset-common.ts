// What `diff`, `restore` and `snapshot --save` share: their options (the tolerances for all PVs
// and per PV by a name pattern, timeout, output), the protocol of bare names, and a Context from the EPICS environment.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { Context, type Protocol } from 'epics-client';
import type { Tolerance, ToleranceRule } from 'epics-client/saveset';
import type { SavesetFormat } from '../saveset-report.js';
import { formatOption, numberArg, timeoutOption } from '../options.js';

export interface ToleranceOpts {
  abs?: number;
  rel?: number;
  precision?: number;
  tolerance?: Array<{ pattern: RegExp; tolerance: Tolerance }>;
}

/** The options `diff` and `restore` share. */
export interface SavesetOpts extends ToleranceOpts {
  timeout: number;
  format: SavesetFormat;
  all?: boolean;
  protocol: Protocol;
  only?: RegExp;
}

const KEYS = { abs: 'abs', rel: 'rel', precision: 'precision', prec: 'precision' } as const;

/** `REGEX=abs:0.1,rel:0.01,precision:2`: a tolerance for the PVs whose name matches. */
export function parsePvTolerance(v: string, prev: ToleranceOpts['tolerance'] = []): NonNullable<ToleranceOpts['tolerance']> {
  const eq = v.lastIndexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected REGEX=abs:N,rel:N,precision:N');
  const pattern = regexArg(v.slice(0, eq))(v.slice(0, eq));
  const tolerance: Tolerance = {};
  for (const part of v.slice(eq + 1).split(',')) {
    const [k, x] = part.split(':');
    const key = KEYS[(k ?? '').trim() as keyof typeof KEYS];
    if (!key || x === undefined) throw new InvalidArgumentError(`"${part}": expected abs:N, rel:N or precision:N`);
    tolerance[key] = numberArg(0)(x);
  }
  return [...prev, { pattern, tolerance }];
}

/** The options `diff` and `restore` share: the PVs, the tolerances, the timeout, the output, the protocol. */
export function addSavesetOptions(cmd: Command, all: string): Command {
  return cmd
    .addOption(new Option('--only <regex>', 'only the PVs whose name matches').argParser(regexArg('--only')))
    .addOption(timeoutOption())
    .addOption(formatOption(['table', 'json', 'markdown'] as const))
    .option('--all', all)
    .addOption(protocolOption())
    .addOption(new Option('--abs <n>', 'numbers equal when they differ by at most N').argParser(numberArg(0)))
    .addOption(
      new Option('--rel <f>', 'numbers equal when they differ by at most this fraction of the larger (0.01: 1%)').argParser(numberArg(0)),
    )
    .addOption(new Option('--precision <n>', "numbers equal within N x 10^-PREC of the PV (PSI snapshot's rule)").argParser(numberArg(0)))
    .addOption(
      new Option(
        '--tolerance <regex=spec>',
        'per PV: REGEX=abs:N,rel:N,precision:N for the names it matches (the first match wins; repeatable)',
      ).argParser(parsePvTolerance),
    );
}

/** The tolerance rule of the options: the first per-PV pattern a name matches, else the one for all. */
export function toleranceRule(o: ToleranceOpts): ToleranceRule | undefined {
  const all: Tolerance = {};
  if (o.abs !== undefined) all.abs = o.abs;
  if (o.rel !== undefined) all.rel = o.rel;
  if (o.precision !== undefined) all.precision = o.precision;
  const global = Object.keys(all).length > 0 ? all : undefined;
  const per = o.tolerance ?? [];
  if (per.length === 0) return global;
  return (name: string) => per.find((p) => p.pattern.test(name))?.tolerance ?? global;
}

/** `--protocol ca|pva` (commander refuses anything else). */
export const protocolOption = (): Option =>
  new Option('--protocol <p>', 'protocol of names without ca:// or pva://').choices(['ca', 'pva']).default('ca');

/** A regular expression from the command line, or a one-line usage error. */
export function regexArg(what: string): (v: string) => RegExp {
  return (v: string) => {
    try {
      return new RegExp(v);
    } catch {
      throw new InvalidArgumentError(`${what}: not a regular expression`);
    }
  };
}

/** Run with a Context on the EPICS environment (or `env`), closed afterwards whatever happens. */
export async function withSavesetContext<T>(
  protocol: Protocol,
  fn: (ctx: Context<Protocol>) => Promise<T>,
  env?: Record<string, string>,
): Promise<T> {
  const ctx = new Context<Protocol>({ protocol, ...(env ? { env } : {}) });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}
