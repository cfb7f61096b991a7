// `epicsperf bench [snapshot|monitor|array|all]`: every client, repeated, one comparison table per
// workload, a JSON file with the environment, the options and every raw figure, and an HTML report.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { doctor } from '../doctor.js';
import { CLIENTS, type Workload } from '../bench/clients.js';
import { compactResults, DEFAULT_SNAPSHOTS, runBench, SNAPSHOT_WORKLOADS } from '../bench/suite.js';
import { benchHtml } from '../report/html.js';
import { renderBench } from '../report/bench.js';
import { exitOnSignals, parseClientList, parseFormat, Progress, prepareClients } from './common.js';
import { intArg, numberArg } from './options.js';
import { UsageError } from '../errors.js';

interface Opts {
  clients?: string;
  repeat: number;
  out?: string;
  html?: string;
  format: string;
  timeout: number;
  records: number;
  samples: number;
  rate: number;
  snapshots: string;
  arrayElements: number;
  arraySamples: number;
  arrayRate: string;
}

export function register(program: Command): void {
  program
    .command('bench')
    .description('run every client on the snapshot and/or monitor workloads, repeated, and compare them')
    .argument('[workload]', 'snapshot, monitor, array, or all (= snapshot and monitor)', 'all')
    .option('--clients <list>', 'comma-separated clients (default: every client that runs the workload)')
    .option('--repeat <n>', 'runs per client and workload', intArg(1, 100), 3)
    .option('--out <file>', 'write the JSON results (environment, options, every raw figure) here')
    .option('--html <file>', 'write an HTML report with charts here')
    .option('--format <format>', 'table, markdown or json (on stdout)', 'table')
    .option('--timeout <ms>', 'snapshot timeout per PV', intArg(1, 600_000), 1000)
    .option('--snapshots <ids>', `snapshot workloads, from ${SNAPSHOT_WORKLOADS.map((w) => w.id).join(', ')}`, DEFAULT_SNAPSHOTS.join(','))
    .option('--records <n>', 'monitor: counters', intArg(1, 100_000), 1000)
    .option('--samples <n>', 'monitor: samples per counter', intArg(2, 100_000), 100)
    .option('--rate <hz>', 'monitor: counter rate', numberArg(0, { exclusiveMin: true }), 10)
    .option('--array-elements <n>', 'array: elements of the waveform', intArg(1, 50_000_000), 10_000_000)
    .option('--array-samples <n>', 'array: updates to receive per run', intArg(2, 10_000), 30)
    .option('--array-rate <hz>', "array: the IOC's refresh rate in Hz, or max (as fast as it can)", 'max')
    .action(async (workload: string, opts: Opts) => {
      if (!['snapshot', 'monitor', 'array', 'all'].includes(workload)) throw new UsageError(`workload must be snapshot, monitor, array or all, got "${workload}"`);
      const format = parseFormat(opts.format, ['table', 'markdown', 'json'] as const);
      const clients = opts.clients === undefined
        ? CLIENTS.filter((c) => workload === 'all' || c.workloads.includes(workload as Workload))
        : parseClientList(opts.clients, workload as Workload | 'all');
      const ids = opts.snapshots.split(',').map((s) => s.trim()).filter(Boolean);
      const snapshots = ids.map((id) => {
        const w = SNAPSHOT_WORKLOADS.find((x) => x.id === id);
        if (!w) throw new UsageError(`unknown snapshot workload "${id}": choose from ${SNAPSHOT_WORKLOADS.map((x) => x.id).join(', ')}`);
        return w;
      });
      const arrayRate = opts.arrayRate === 'max' ? 'max' : Number(opts.arrayRate);
      if (arrayRate !== 'max' && !(Number.isFinite(arrayRate) && arrayRate > 0))
        throw new UsageError(`--array-rate must be a number > 0 or max, got "${opts.arrayRate}"`);
      exitOnSignals();
      const python = await prepareClients(clients, true);
      const report = await doctor();
      const progress = new Progress();
      const results = await runBench({
        clients,
        workloads: {
          snapshot: workload === 'snapshot' || workload === 'all' ? snapshots : [],
          monitor: workload === 'monitor' || workload === 'all',
          array: workload === 'array' ? { elements: opts.arrayElements, samples: opts.arraySamples, rate: arrayRate } : undefined,
        },
        repeat: opts.repeat,
        timeoutMs: opts.timeout,
        records: opts.records,
        samples: opts.samples,
        rate: opts.rate,
        python,
        report,
        onProgress: (s) => progress.update(s),
      });
      progress.done();
      if (opts.out) writeFileSync(opts.out, JSON.stringify(compactResults(results), null, 2) + '\n');
      if (opts.html) writeFileSync(opts.html, benchHtml(results));
      process.stdout.write(format === 'json' ? JSON.stringify(compactResults(results), null, 2) + '\n' : renderBench(results, format === 'markdown'));
    });
}
