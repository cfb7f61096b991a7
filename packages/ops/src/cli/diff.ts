// `diff <a> <b>` and `diff <a> --live`: two saved snapshots (of any format
// read) compared PV by PV, or one with the machine as it is now, within a tolerance. Exit 0 when
// equal, 1 when not, 2 on bad input.
import type { Command } from 'commander';
import { compare, compareLive } from 'epics-client/saveset';
import { UsageError } from '../errors.js';
import { renderDiff } from '../saveset-report.js';
import { readSaveSet } from '../files.js';
import { addSavesetOptions, toleranceRule, withSavesetContext, type SavesetOpts } from './saveset-common.js';

interface Opts extends SavesetOpts {
  live?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('diff')
    .description('compare two saved snapshots, or one with the live machine (--live), within a tolerance (exit 0: equal, 1: not)')
    .argument('<a>', "a saved snapshot: this project's, Phoebus CSV, PSI .snap or autosave .sav")
    .argument('[b]', 'the snapshot to compare it with')
    .option('--live', 'compare with the PVs as they are now (read from the IOCs the EPICS_* environment names)');
  addSavesetOptions(cmd, 'list every PV, the equal ones too').action(async (a: string, b: string | undefined, opts: Opts) => {
    if ((opts.live === true) === (b !== undefined))
      throw new UsageError(b === undefined ? 'diff needs a second snapshot or --live' : 'give a second snapshot or --live, not both');
    const A = readSaveSet(a).set;
    const rule = { tolerance: toleranceRule(opts), only: opts.only };
    const view = { all: opts.all, labels: [a, b ?? 'live'] as [string, string] };
    const d =
      b !== undefined
        ? compare(A, readSaveSet(b).set, rule)
        : await withSavesetContext(opts.protocol, (ctx) => compareLive(ctx, A, { ...rule, timeout: opts.timeout }));
    process.stdout.write(renderDiff(d, opts.format, view));
    process.exitCode = d.equal ? 0 : 1;
  });
}
