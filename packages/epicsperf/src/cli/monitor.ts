// `epicsperf monitor --client NAME`: the EPICSPyClientPerformance workload for one client.
import type { Command } from 'commander';
import { runMonitor } from '../bench/monitor.js';
import { MONITOR_FORMAT, type MonitorDocument } from '../results/index.js';
import { counterNames } from '../ioc/index.js';
import { monitorTable, summarizeMonitor } from '../report/monitor.js';
import { exitOnSignals, parseClient, orClose, placement, Progress, prepareClients, target, type HostOpts } from './common.js';
import {
  clientOption,
  formatOption,
  hostsOption,
  type IocMode,
  iocOption,
  keysOption,
  nameStyleOption,
  placeOption,
  prefixOption,
  rateOption,
  recordsOption,
  samplesOption,
  serverOption,
} from '../options.js';

interface Opts extends HostOpts {
  client: string;
  records: number;
  samples: number;
  rate: number;
  format: 'table' | 'json';
  ioc: IocMode;
  prefix: string;
  nameStyle: 'plain' | 'padded';
}

export function register(program: Command): void {
  program
    .command('monitor')
    .description(
      "monitor the IOC's counters with one client until every PV has its samples; CPU measured from outside, every sample checked",
    )
    .addOption(clientOption('client to measure'))
    .addOption(recordsOption())
    .addOption(samplesOption())
    .addOption(rateOption())
    .addOption(formatOption(['table', 'json'] as const))
    .addOption(iocOption('builtin'))
    .addOption(prefixOption())
    .addOption(nameStyleOption())
    .addOption(serverOption())
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .action(async (opts: Opts) => {
      const format = opts.format;
      const client = parseClient(opts.client, 'monitor');
      exitOnSignals();
      const python = await prepareClients([client], opts.ioc === 'builtin');
      const pl = await placement(opts, [client], python);
      const t = await orClose(
        pl,
        target(opts.ioc, { records: opts.records, rate: opts.rate, prefix: opts.prefix, nameStyle: opts.nameStyle, arrayElements: 0 }, pl),
      );
      const progress = new Progress();
      try {
        const names = t.ioc ? t.ioc.counterNames() : counterNames(opts.prefix, opts.nameStyle, opts.records);
        const run = await runMonitor({
          client,
          python,
          env: t.env,
          names,
          samples: opts.samples,
          rate: opts.rate,
          ...(t.ioc && { iocMeter: t.ioc.meter }),
          ...pl.runOn(client.name),
          onProgress: (s) => progress.update(`monitor ${client.name}: ${s}`),
        });
        progress.done();
        const doc: MonitorDocument = { schema: MONITOR_FORMAT, options: { ...opts }, run };
        if (format === 'json') process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
        else {
          process.stdout.write(monitorTable(summarizeMonitor(new Map([[client.name, [run]]]))));
          for (const f of run.check?.findings ?? []) process.stdout.write(`  ${f}\n`);
        }
        process.exitCode = run.ok ? 0 : 1;
      } finally {
        progress.done();
        await t.stop();
        await pl.close();
      }
    });
}
