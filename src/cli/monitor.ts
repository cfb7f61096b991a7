// `epicsperf monitor --client NAME`: the EPICSPyClientPerformance workload for one client.
import type { Command } from 'commander';
import { runMonitor } from '../bench/monitor.js';
import { MONITOR_FORMAT } from '../results/index.js';
import { counterNames } from '../ioc/index.js';
import { monitorTable, summarizeMonitor } from '../report/monitor.js';
import { exitOnSignals, parseClient, parseFormat, Progress, prepareClients, target } from './common.js';
import { intArg, numberArg } from './options.js';
import { UsageError } from '../errors.js';

interface Opts {
  client: string;
  records: number;
  samples: number;
  rate: number;
  format: string;
  ioc: string;
  prefix: string;
  nameStyle: string;
}

export function register(program: Command): void {
  program
    .command('monitor')
    .description("monitor the IOC's counters with one client until every PV has its samples; CPU measured from outside, every sample checked")
    .option('--client <name>', 'client to measure (see `epicsperf clients`)', 'node')
    .option('--records <n>', 'number of counters to monitor', intArg(1, 100_000), 1000)
    .option('--samples <n>', 'samples to collect per counter', intArg(2, 100_000), 100)
    .option('--rate <hz>', 'counter update rate of the built-in IOC', numberArg(0, { exclusiveMin: true }), 10)
    .option('--format <format>', 'table or json', 'table')
    .option('--ioc <ioc>', 'builtin: start the built-in IOC; external: the IOC the EPICS_* environment names', 'builtin')
    .option('--prefix <prefix>', 'counter name prefix (with --ioc external)', 'TEST:')
    .option('--name-style <style>', 'plain (CALC1..) or padded (CALC00000..)', 'plain')
    .action(async (opts: Opts) => {
      const format = parseFormat(opts.format, ['table', 'json'] as const);
      const client = parseClient(opts.client, 'monitor');
      if (opts.nameStyle !== 'plain' && opts.nameStyle !== 'padded') throw new UsageError(`--name-style must be plain or padded, got "${opts.nameStyle}"`);
      if (opts.ioc !== 'builtin' && opts.ioc !== 'external') throw new UsageError(`--ioc must be builtin or external, got "${opts.ioc}"`);
      exitOnSignals();
      const python = await prepareClients([client], opts.ioc === 'builtin');
      const t = await target(opts.ioc, { records: opts.records, rate: opts.rate, prefix: opts.prefix, nameStyle: opts.nameStyle, arrayElements: 0 });
      const progress = new Progress();
      try {
        const names = t.ioc ? t.ioc.counterNames() : counterNames(opts.prefix, opts.nameStyle, opts.records);
        const run = await runMonitor({
          client, python, env: t.env, names, samples: opts.samples, rate: opts.rate,
          ...(t.ioc && { iocPid: t.ioc.pid }),
          onProgress: (s) => progress.update(`monitor ${client.name}: ${s}`),
        });
        progress.done();
        if (format === 'json') process.stdout.write(JSON.stringify({ schema: MONITOR_FORMAT, options: { ...opts }, run }, null, 2) + '\n');
        else {
          process.stdout.write(monitorTable(summarizeMonitor(new Map([[client.name, [run]]]))));
          for (const f of run.check?.findings ?? []) process.stdout.write(`  ${f}\n`);
        }
        process.exitCode = run.ok ? 0 : 1;
      } finally {
        progress.done();
        await t.stop();
      }
    });
}
