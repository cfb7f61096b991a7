// `epicsperf snapshot FILE`: read every PV in a list once, concurrently, each against its own timeout.
import type { Command } from 'commander';
import { DEFAULTS } from '../defaults.js';
import { readPvList } from '../pvlist.js';
import { runSnapshot } from '../bench/snapshot.js';
import { snapshotCsv, snapshotJson, snapshotTable } from '../report/snapshot.js';
import { exitOnSignals, parseClient, orClose, placement, Progress, prepareClients, target, type HostOpts } from './common.js';
import { clientOption, formatOption, hostsOption, iocOption, keysOption, placeOption, timeoutOption, type IocMode } from './options.js';

interface Opts extends HostOpts {
  timeout: number;
  client: string;
  format: 'table' | 'json' | 'csv';
  ioc: IocMode;
  check?: boolean;
}

export function register(program: Command): void {
  program
    .command('snapshot')
    .description('read every PV in a list once, concurrently, each against its own timeout (exit 0: all answered, 1: some failed)')
    .argument('<file>', 'PV list: one name per line, # comments; - reads stdin')
    .addOption(timeoutOption())
    .addOption(clientOption('client that reads'))
    .addOption(formatOption(['table', 'json', 'csv'] as const))
    .addOption(iocOption('env'))
    .option('--check', 'check each value against reads made before and after')
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .action(async (file: string, opts: Opts) => {
      const format = opts.format;
      const client = parseClient(opts.client, 'snapshot');
      const names = readPvList(file);
      exitOnSignals();
      const python = await prepareClients([client], opts.ioc === 'builtin', opts.check === true);
      const records = names.reduce((m, n) => Math.max(m, counterIndex(n)), DEFAULTS.records);
      const pl = await placement(opts, [client], python, opts.check === true);
      const t = await orClose(pl, target(opts.ioc, { arrayElements: 0, rate: 1, records }, pl));
      const progress = new Progress();
      try {
        const run = await runSnapshot({
          client, python, env: t.env, names, timeoutMs: opts.timeout, verify: opts.check ?? false, ...pl.runOn(client.name),
          onProgress: (s) => progress.update(`snapshot ${client.name}: ${s}`),
        });
        progress.done();
        if (run.error && run.rows.length === 0) throw new Error(`${client.name}: ${run.error}`);
        process.stdout.write(format === 'json' ? snapshotJson(run, opts.timeout) : format === 'csv' ? snapshotCsv(run) : snapshotTable(run, opts.timeout));
        process.exitCode = run.failed > 0 || run.wrong > 0 ? 1 : 0;
      } finally {
        progress.done();
        await t.stop();
        await pl.close();
      }
    });
}

/** The highest counter a list names (TEST:CALC<n>), so the built-in IOC serves them all. */
function counterIndex(name: string): number {
  const m = /^TEST:CALC(\d+)$/.exec(name);
  return m ? Math.min(Number(m[1]), 100_000) : 0;
}
