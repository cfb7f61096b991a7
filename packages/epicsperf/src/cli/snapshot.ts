// `epicsperf snapshot FILE`: epics-ops's snapshot (read every PV in a list once, concurrently,
// each against its own timeout, with epics-client in this process; --save keeps what was read),
// with the tool's built-in IOC (--ioc builtin) and its benchmark clients, each in a runner
// process of its own (--client, --check, --hosts), to compare clients.
import type { Command } from 'commander';
import {
  addSnapshotOptions,
  readHere,
  readNames,
  saveSnapshot,
  snapshotCsv,
  snapshotJson,
  snapshotTable,
  type SnapshotOpts,
} from 'epics-ops';
import { DEFAULTS } from '../defaults.js';
import { UsageError } from '../errors.js';
import { runSnapshot } from '../bench/snapshot.js';
import { exitOnSignals, parseClient, orClose, placement, Progress, prepareClients, target, type HostOpts } from './common.js';
import { clientOption, hostsOption, type IocMode, iocOption, keysOption, placeOption, serverOption } from '../options.js';

interface Opts extends HostOpts, SnapshotOpts {
  client?: string;
  ioc: IocMode;
  check?: boolean;
}

export function register(program: Command): void {
  addSnapshotOptions(program.command('snapshot'))
    .addOption(clientOption('read with this benchmark client in a process of its own (default: epics-client in this process)', null))
    .addOption(iocOption('env'))
    .option('--check', 'check each value against reads made before and after')
    .addOption(serverOption())
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .action(async (file: string, opts: Opts) => {
      const format = opts.format;
      const viaRunner = opts.client !== undefined || opts.check === true || opts.hosts !== undefined;
      const client = parseClient(opts.client ?? DEFAULTS.client, 'snapshot');
      const names = readNames(file, opts.macro);
      if (opts.save !== undefined) {
        if (opts.client !== undefined) throw new UsageError(`--save reads with epics-client in this process, without --client`);
        if (opts.hosts !== undefined || opts.check) throw new UsageError(`--save reads on this host, without --hosts or --check`);
      }
      if (opts.save !== undefined || !viaRunner) {
        // Here, on the environment's IOCs or the built-in IOC serving every counter the list names.
        exitOnSignals();
        const t = await target(opts.ioc, { arrayElements: 0, rate: 1, records: countersOf(names) });
        try {
          return await (opts.save !== undefined ? saveSnapshot(names, opts, t.env) : readHere(names, opts, t.env));
        } finally {
          await t.stop();
        }
      }
      exitOnSignals();
      const python = await prepareClients([client], opts.ioc === 'builtin', opts.check === true);
      const pl = await placement(opts, [client], python, opts.check === true);
      const t = await orClose(pl, target(opts.ioc, { arrayElements: 0, rate: 1, records: countersOf(names) }, pl));
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

/** The built-in IOC's counters for a list: at least the default, and every TEST:CALC<n> it names. */
const countersOf = (names: readonly string[]) => names.reduce((m, n) => Math.max(m, counterIndex(n)), DEFAULTS.records);

/** The highest counter a list names (TEST:CALC<n>), so the built-in IOC serves them all. */
function counterIndex(name: string): number {
  const m = /^TEST:CALC(\d+)$/.exec(name);
  return m ? Math.min(Number(m[1]), 100_000) : 0;
}
