// `snapshot FILE`: read every PV in a list once, concurrently, each against its own timeout,
// with epics-client in this process; --save keeps what was read in a snapshot file of any
// format. `epicsperf snapshot` adds its benchmark clients and its built-in IOC to these.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Protocol } from 'epics-client';
import { save } from 'epics-client/saveset';
import { readNames, writeSaveSet } from '../files.js';
import { readSnapshot } from '../read.js';
import { snapshotCsv, snapshotJson, snapshotTable } from '../snapshot-report.js';
import { fmt } from '../table.js';
import { formatOption, timeoutOption } from '../options.js';
import { protocolOption, withSavesetContext } from './saveset-common.js';
import { clientVersion } from '../version.js';

export interface SnapshotOpts {
  timeout: number;
  format: 'table' | 'json' | 'csv';
  save?: string;
  comment?: string;
  label?: string[];
  macro?: Record<string, string>;
  protocol: Protocol;
}

/** The snapshot command's description, argument and options: reading a list here and saving it. */
export function addSnapshotOptions(cmd: Command): Command {
  return cmd
    .description('read every PV in a list once, concurrently, each against its own timeout (exit 0: all answered, 1: some failed)')
    .argument('<file>', 'PV list (one name per line, # comments; - reads stdin), an autosave .req file, or a saved snapshot')
    .addOption(timeoutOption())
    .addOption(formatOption(['table', 'json', 'csv'] as const))
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
    .addOption(protocolOption());
}

export function register(program: Command): void {
  const name = program.name();
  addSnapshotOptions(program.command('snapshot')).action(async (file: string, opts: SnapshotOpts) => {
    exitOnSignals(name);
    const names = readNames(file, opts.macro);
    await (opts.save !== undefined ? saveSnapshot(names, opts) : readHere(names, opts));
  });
}

/** Read with epics-client in this process (on the EPICS environment, or `env`) and print the rows. */
export async function readHere(names: readonly string[], opts: SnapshotOpts, env?: Record<string, string>): Promise<void> {
  const run = await withSavesetContext(
    opts.protocol,
    (ctx) => readSnapshot(ctx, names, opts.timeout, { name: 'epics-client', version: clientVersion() }),
    env,
  );
  const f = opts.format;
  process.stdout.write(f === 'json' ? snapshotJson(run, opts.timeout) : f === 'csv' ? snapshotCsv(run) : snapshotTable(run, opts.timeout));
  process.exitCode = run.failed > 0 ? 1 : 0;
}

/** `--save`: read with epics-client in this process, and write the snapshot file whole. */
export async function saveSnapshot(names: readonly string[], opts: SnapshotOpts, env?: Record<string, string>): Promise<void> {
  const path = opts.save!;
  const t0 = performance.now();
  const set = await withSavesetContext(
    opts.protocol,
    (ctx) => save(ctx, names, { timeout: opts.timeout, comment: opts.comment, labels: opts.label }),
    env,
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
}

function macroArg(v: string, prev: Record<string, string> = {}): Record<string, string> {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected NAME=VALUE');
  return { ...prev, [v.slice(0, eq)]: v.slice(eq + 1) };
}

let signalsHooked = false;
/** Ctrl-C or a TERM ends the command at once, saying so (a file being written is written whole or not at all). */
export function exitOnSignals(program: string): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      process.stderr.write(`\n${program}: interrupted\n`);
      process.exit(130);
    });
  }
}
