// `ca get|put|monitor|info`: caget, caput, camonitor and cainfo on this project's
// client, with their flags and output layouts; a PV not found is caget's message and exit 1.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { NATIVE_TYPE_NAMES, type FormName } from 'epics-client/ca';
import { Context, BadArgumentError, type Reading, type GetOptions } from 'epics-client';
import { type CommonFlags, connectAll, failureText, readOptionsFor, styleOf, UsageError } from './ca-common.js';
import { dbrBlock, infoBlock, nameColumn, parseDbrType, timeText, valuePart, wideTail } from './ca-format.js';
import { runMonitor, type MonitorFlags } from './ca-monitor.js';
import { putValue, type PutFlags } from './ca-put.js';
import { EXIT_FAILURE, EXIT_USAGE } from './exit.js';
import { intArg, numberArg } from '../options.js';

interface GetFlags extends CommonFlags {
  t?: boolean;
  a?: boolean;
  d?: number;
  c?: boolean;
}

/** -w: seconds, default EPICS_CLI_TIMEOUT or 1.0 as the C tools. */
function timeoutOption(): Option {
  const env = Number(process.env.EPICS_CLI_TIMEOUT);
  return new Option('-w <sec>', 'wait time (CA timeout) in seconds')
    .argParser(numberArg(0, { exclusiveMin: true }))
    .default(Number.isFinite(env) && env > 0 ? env : 1.0);
}

function dbrTypeArg(v: string): number {
  const id = parseDbrType(v);
  if (id === undefined) throw new InvalidArgumentError('expected a DBR type 0..34 or its name (DOUBLE, TIME_LONG, DBR_CTRL_ENUM, ...).');
  return id;
}

const commonOptions = (cmd: Command): Command =>
  cmd
    .addOption(timeoutOption())
    .option('-n', 'enums as numbers (default: state strings)')
    .addOption(new Option('-# <count>', 'first <count> elements of an array').argParser(intArg(1)))
    .option('-S', 'char arrays as strings (long strings)')
    .addOption(
      new Option('-F <ofs>', 'output field separator').argParser((v: string) => {
        if (v.length !== 1) throw new InvalidArgumentError('expected one character.');
        return v;
      }),
    );

export function register(program: Command): void {
  const name = program.name();
  const ca = program.command('ca').description('caget, caput, camonitor and cainfo on epics-client (no C tools needed)');
  commonOptions(ca.command('get').description('read and print PVs, as caget').argument('<pv...>', 'PV names'))
    .option('-t', 'terse: the value only')
    .option('-a', 'wide: name, timestamp, value, status, severity')
    .addOption(new Option('-d <type>', 'request this DBR type (name or number) and print every field').argParser(dbrTypeArg))
    .option(
      '-c',
      "asynchronous get, as caget -c: an array's current length (without it, its element count, filled with zeros past the current length, as caget prints it)",
    )
    .action((pvs: string[], o: GetFlags) => withContext(name, (ctx) => caget(ctx, pvs, o)));
  commonOptions(
    ca.command('put').description('write a PV and print its old and new value, as caput').argument('<pv>').argument('<value...>'),
  )
    .option('-t', 'terse: the new value only')
    .option('-l', 'long: old and new as name, timestamp, value, status, severity')
    .option('-c', 'wait for the put to complete (WRITE_NOTIFY)')
    .option('-s', 'enum values are state strings')
    .option('-a', 'array: <pv> <count> <value> ...')
    .action((pv: string, values: string[], o: PutFlags) => withContext(name, (ctx) => caput(ctx, pv, values, o)));
  commonOptions(ca.command('monitor').description('print every update of PVs, as camonitor').argument('<pv...>', 'PV names'))
    .option('-m <mask>', 'event mask: any of v (value), a (alarm), l (log), p (property)', 'va')
    .option('-t <key>', 'timestamps: s server, c client, n none; r relative, i incremental, I incremental per channel', 's')
    .addOption(new Option('--updates <n>', 'exit after this many updates in all (default: until Ctrl-C)').argParser(intArg(1)))
    .action((pvs: string[], o: MonitorFlags) => withContext(name, (ctx) => runMonitor(ctx, pvs, o)));
  ca.command('info')
    .description('print what a channel is, as cainfo')
    .argument('<pv...>', 'PV names')
    .addOption(timeoutOption())
    .action((pvs: string[], o: { w: number }) => withContext(name, (ctx) => cainfo(ctx, pvs, o)));
}

/** Run with a Context from the environment, closed afterwards; bad input exits 2, CA failures 1. */
async function withContext(program: string, fn: (ctx: Context) => Promise<number>): Promise<void> {
  const ctx = new Context();
  try {
    process.exitCode = await fn(ctx);
  } catch (e) {
    if (!(e instanceof BadArgumentError) && !(e instanceof UsageError)) throw e;
    process.stderr.write(`${program}: error: ${e.message}\n`);
    process.exitCode = EXIT_USAGE;
  } finally {
    await ctx.close();
  }
}

async function caget(ctx: Context, names: string[], o: GetFlags): Promise<number> {
  if ([o.t, o.a, o.d !== undefined].filter(Boolean).length > 1) throw new UsageError('options -t, -a and -d are mutually exclusive');
  const infos = await connectAll(ctx, names, o.w);
  const timeout = o.w * 1000;
  const reads = infos.map((info, i) => {
    if (!info) return Promise.resolve(undefined);
    let opts: GetOptions;
    if (o.d !== undefined) {
      const native = NATIVE_TYPE_NAMES[o.d % 7]!;
      const count = o['#'] ?? (o.c ? undefined : info.elementCount);
      opts = { type: native, form: ['plain', 'sts', 'time', 'gr', 'ctrl'][(o.d / 7) | 0] as FormName, count };
      if (o.S && native === 'char') opts.longString = true;
    } else opts = readOptionsFor(info, o, 'time', !o.c);
    return ctx.get(names[i]!, { ...opts, timeout }).then(
      (r: Reading) => r,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
  });
  let failed = infos.filter((x) => !x).length;
  for (let i = 0; i < names.length; i++) {
    const info = infos[i];
    const r = await reads[i];
    if (!info || !r) continue;
    const name = names[i]!;
    if (r instanceof Error) {
      failed++;
      process.stdout.write(
        o.d !== undefined ? `${name}\n    ${failureText(r)}\n` : `${o.t ? '' : nameColumn(name, 1, styleOf(o, false))}${failureText(r)}\n`,
      );
      continue;
    }
    const style = styleOf(o, o['#'] !== undefined || r.count > 1);
    if (o.d !== undefined) process.stdout.write(dbrBlock(name, info, r, style, !o.n));
    else if (o.t) process.stdout.write(`${valuePart(r, style)}\n`);
    else if (o.a) process.stdout.write(`${nameColumn(name, r.count, style)}${wideTail(r, timeText(r.timestamp!, r.nanoseconds), style)}\n`);
    else process.stdout.write(`${nameColumn(name, r.count, style)}${valuePart(r, style)}\n`);
  }
  return failed > 0 ? EXIT_FAILURE : 0;
}

async function caput(ctx: Context, name: string, values: string[], o: PutFlags): Promise<number> {
  if ([o.t, o.l].filter(Boolean).length > 1) throw new UsageError('options -t and -l are mutually exclusive');
  if (o.n && o.s) throw new UsageError('options -n and -s are mutually exclusive');
  const [info] = await connectAll(ctx, [name], o.w);
  if (!info) return EXIT_FAILURE;
  const timeout = o.w * 1000;
  const opts = { ...readOptionsFor(info, o, 'time', true), timeout };
  const show = (label: string, r: Reading): string => {
    const style = styleOf(o, o['#'] !== undefined || r.count > 1);
    if (o.t) return `${valuePart(r, style)}\n`;
    const body = o.l ? wideTail(r, timeText(r.timestamp!, r.nanoseconds), style) : valuePart(r, style);
    return `${label} : ${nameColumn(name, r.count, style)}${body}\n`;
  };
  const old = await ctx.get(name, opts);
  const value = await putValue(ctx, info, values, o);
  await ctx.put(name, value, { wait: o.c === true, timeout });
  const now = await ctx.get(name, opts);
  process.stdout.write(o.t ? show('New', now) : show('Old', old) + show('New', now));
  return 0;
}

async function cainfo(ctx: Context, names: string[], o: { w: number }): Promise<number> {
  const infos = await connectAll(ctx, names, o.w);
  for (const info of infos) if (info) process.stdout.write(infoBlock(info));
  return infos.some((x) => !x) ? EXIT_FAILURE : 0;
}
