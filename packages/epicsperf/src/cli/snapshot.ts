// `epicsperf snapshot FILE`: read every PV in a list once, concurrently, each against its own
// timeout: with epics-client in this process by default (--save keeps what was read), or with a
// benchmark client in a runner process of its own (--client, --check, --hosts) to compare clients.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Protocol } from 'epics-client';
import { save } from 'epics-client/saveset';
import { DEFAULTS } from '../defaults.js';
import { UsageError } from '../errors.js';
import { fmt } from '../report/table.js';
import { packageVersion } from '../doctor.js';
import { readNames, writeSaveSet } from '../snapshots/files.js';
import { readSnapshot } from '../snapshots/read.js';
import { runSnapshot } from '../bench/snapshot.js';
import { snapshotCsv, snapshotJson, snapshotTable } from '../report/snapshot.js';
import { exitOnSignals, parseClient, orClose, placement, Progress, prepareClients, target, type HostOpts } from './common.js';
import { clientOption, formatOption, hostsOption, iocOption, keysOption, placeOption, timeoutOption, type IocMode } from '../options.js';
import { protocolOption, withSavesetContext } from './saveset-common.js';

interface Opts extends HostOpts {
  timeout: number;
  client?: string;
  format: 'table' | 'json' | 'csv';
  ioc: IocMode;
  check?: boolean;
  save?: string;
  comment?: string;
  label?: string[];
  macro?: Record<string, string>;
  protocol: Protocol;
}

export function register(program: Command): void {
  program
    .command('snapshot')
    .description('read every PV in a list once, concurrently, each against its own timeout (exit 0: all answered, 1: some failed)')
    .argument('<file>', 'PV list (one name per line, # comments; - reads stdin), an autosave .req file, or a saved snapshot')
    .addOption(timeoutOption())
    .addOption(clientOption('read with this benchmark client in a process of its own (default: epics-client in this process)', null))
    .addOption(formatOption(['table', 'json', 'csv'] as const))
    .addOption(iocOption('env'))
    .option('--check', 'check each value against reads made before and after')
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .option(
      '--save <file>',
      "save what was read: this project's snapshot file, or Phoebus CSV (.csv), PSI snapshot (.snap) or autosave (.sav) by the name",
    )
    .option('--comment <text>', 'a comment kept with the saved snapshot')
    .addOption(
      new Option('--label <label>', 'a label kept with the saved snapshot (repeatable)').argParser((v: string, prev: string[] = []) => [
        ...prev,
        v,
      ]),
    )
    .addOption(new Option('--macro <name=value>', 'a macro of an autosave .req file (repeatable)').argParser(macroArg))
    .addOption(protocolOption())
    .action(async (file: string, opts: Opts) => {
      const format = opts.format;
      const viaRunner = opts.client !== undefined || opts.check === true || opts.hosts !== undefined;
      const client = parseClient(opts.client ?? 'node', 'snapshot');
      const names = readNames(file, opts.macro);
      if (opts.save !== undefined) return saveSnapshot(names, opts);
      if (!viaRunner) return readHere(names, opts);
      exitOnSignals();
      const python = await prepareClients([client], opts.ioc === 'builtin', opts.check === true);
      const records = names.reduce((m, n) => Math.max(m, counterIndex(n)), DEFAULTS.records);
      const pl = await placement(opts, [client], python, opts.check === true);
      const t = await orClose(pl, target(opts.ioc, { arrayElements: 0, rate: 1, records }, pl));
      const progress = new Progress();
      try {
        const run = await runSnapshot({
          client,
          python,
          env: t.env,
          names,
          timeoutMs: opts.timeout,
          verify: opts.check ?? false,
          ...pl.runOn(client.name),
          onProgress: (s) => progress.update(`snapshot ${client.name}: ${s}`),
        });
        progress.done();
        if (run.error && run.rows.length === 0) throw new Error(`${client.name}: ${run.error}`);
        process.stdout.write(
          format === 'json' ? snapshotJson(run, opts.timeout) : format === 'csv' ? snapshotCsv(run) : snapshotTable(run, opts.timeout),
        );
        process.exitCode = run.failed > 0 || run.wrong > 0 ? 1 : 0;
      } finally {
        progress.done();
        await t.stop();
        await pl.close();
      }
    });
}

/** The built-in IOC (--ioc builtin) serving every counter the list names, or the environment's IOCs. */
const targetFor = (names: readonly string[], opts: Opts) =>
  target(opts.ioc, { arrayElements: 0, rate: 1, records: names.reduce((m, n) => Math.max(m, counterIndex(n)), DEFAULTS.records) });

/** Read with epics-client in this process and print the rows. */
async function readHere(names: string[], opts: Opts): Promise<void> {
  exitOnSignals();
  const t = await targetFor(names, opts);
  try {
    const run = await withSavesetContext(
      opts.protocol,
      (ctx) => readSnapshot(ctx, names, opts.timeout, { name: 'epics-client', version: packageVersion() }),
      t.env,
    );
    const f = opts.format;
    process.stdout.write(
      f === 'json' ? snapshotJson(run, opts.timeout) : f === 'csv' ? snapshotCsv(run) : snapshotTable(run, opts.timeout),
    );
    process.exitCode = run.failed > 0 ? 1 : 0;
  } finally {
    await t.stop();
  }
}

/** `--save`: read with this project's client in this process, and write the snapshot file whole. */
async function saveSnapshot(names: string[], opts: Opts): Promise<void> {
  if (opts.client !== undefined) throw new UsageError(`--save reads with epics-client in this process, without --client`);
  if (opts.hosts !== undefined || opts.check) throw new UsageError(`--save reads on this host, without --hosts or --check`);
  const path = opts.save!;
  exitOnSignals();
  const t = await targetFor(names, opts);
  try {
    const t0 = performance.now();
    const set = await withSavesetContext(
      opts.protocol,
      (ctx) => save(ctx, names, { timeout: opts.timeout, comment: opts.comment, labels: opts.label }),
      t.env,
    );
    const seconds = (performance.now() - t0) / 1000;
    const kind = writeSaveSet(path, set);
    const missing = set.pvs.filter((p) => !p.ok);
    for (const p of missing.slice(0, 20)) process.stderr.write(`  not saved: ${p.name}: ${p.error}\n`);
    if (missing.length > 20) process.stderr.write(`  ... and ${missing.length - 20} more not saved (all are in the file)\n`);
    process.stdout.write(
      `saved ${set.pvs.length} PVs to ${path} (${kind}): ${set.pvs.length - missing.length} answered, ${missing.length} not, read in ${fmt(seconds, 3)} s\n`,
    );
    process.exitCode = missing.length > 0 ? 1 : 0;
  } finally {
    await t.stop();
  }
}

function macroArg(v: string, prev: Record<string, string> = {}): Record<string, string> {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected NAME=VALUE');
  return { ...prev, [v.slice(0, eq)]: v.slice(eq + 1) };
}

/** The highest counter a list names (TEST:CALC<n>), so the built-in IOC serves them all. */
function counterIndex(name: string): number {
  const m = /^TEST:CALC(\d+)$/.exec(name);
  return m ? Math.min(Number(m[1]), 100_000) : 0;
}
