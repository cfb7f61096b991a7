// `restore <file>`: write a saved snapshot back, every PV at once with completion, then
// read back and compared. On a terminal it shows the changes and asks first; elsewhere it writes
// only with --yes. Ctrl-C stops the writes and still reports what was and was not written.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { restore, type RestorePlan, type RestoreReport } from 'epics-client/saveset';
import { changesTable, renderRestore } from '../saveset-report.js';
import { readSaveSet } from '../files.js';
import { addSavesetOptions, toleranceRule, withSavesetContext, type SavesetOpts } from './saveset-common.js';

interface Opts extends SavesetOpts {
  dryRun?: boolean;
  rewrite?: boolean;
  yes?: boolean;
}

export function register(program: Command): void {
  const name = program.name();
  const cmd = program
    .command('restore')
    .description(
      'write a saved snapshot back: every PV at once with completion, then read back and compared (exit 0: all restored or equal)',
    )
    .argument('<file>', "a saved snapshot: this project's, Phoebus CSV, PSI .snap or autosave .sav")
    .option('--dry-run', 'read and compare, show what would be written, write nothing')
    .option('-y, --yes', 'write without asking (needed when not on a terminal)')
    .option('--rewrite', 'write the PVs already equal to their saved value too');
  addSavesetOptions(cmd, 'list every PV, the already equal ones too').action(async (file: string, opts: Opts) => {
    const { set } = readSaveSet(file);
    const ac = new AbortController();
    const onSignal = (): void => {
      if (ac.signal.aborted) process.exit(130);
      process.stderr.write(`\n${name}: interrupted: finishing what was sent and reading back (Ctrl-C again to quit now)\n`);
      ac.abort();
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
    let refused = false;
    const confirm = async (plan: RestorePlan): Promise<boolean> => {
      if (!opts.yes) {
        if (!interactive) {
          refused = true;
          return false;
        }
        process.stdout.write(changesTable(plan.changes));
        if (!(await ask(`write these ${plan.changes.length} PVs? [y/N] `, ac.signal))) return false;
      }
      process.stderr.write(`writing ${plan.changes.length} PVs (Ctrl-C stops the writes and still reports)\n`);
      return true;
    };
    let rep: RestoreReport;
    try {
      rep = await withSavesetContext(opts.protocol, (ctx) =>
        restore(ctx, set, {
          timeout: opts.timeout,
          only: opts.only,
          dryRun: opts.dryRun,
          rewrite: opts.rewrite,
          tolerance: toleranceRule(opts),
          confirm,
          signal: ac.signal,
        }),
      );
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    }
    process.stdout.write(renderRestore(rep, opts.format, { all: opts.all }));
    if (refused)
      process.stderr.write(
        `${name}: restore: nothing written: not a terminal, and --yes not given (${rep.summary.notWritten} PVs would be written)\n`,
      );
    process.exitCode = rep.interrupted ? 130 : exitCode(rep);
  });
}

/** 0 when every PV that may be written is restored or already equal (read-only and unsaved PVs skipped), else 1. */
function exitCode(rep: RestoreReport): number {
  if (rep.dryRun) return rep.summary.notWritten > 0 || rep.summary.failed > 0 ? 1 : 0;
  return rep.pvs.every((r) => r.outcome === 'restored' || r.outcome === 'equal' || r.code === 'read-only' || r.code === 'not-saved')
    ? 0
    : 1;
}

async function ask(question: string, signal: AbortSignal): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question(question, { signal });
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}
