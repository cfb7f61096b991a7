// `epicsperf bench [snapshot|monitor|array|all]`: every client, repeated, one comparison table per
// workload, a JSON file with the environment, the options and every raw figure, and an HTML report.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { doctor } from '../doctor.js';
import { CLIENTS, type Workload } from '../bench/clients.js';
import { compactResults, DEFAULT_SNAPSHOTS, runBench, SNAPSHOT_WORKLOADS } from '../bench/suite.js';
import { benchHtml } from '../report/html.js';
import { renderBench } from '../report/bench.js';
import { DEFAULTS } from '../defaults.js';
import { exitOnSignals, parseClientList, Progress, prepareClients } from './common.js';
import {
  arrayElementsOption, arrayRateOption, formatOption, intArg, rateOption, recordsOption, samplesOption, timeoutOption,
} from './options.js';
import { UsageError } from '../errors.js';
import { CAPTURE_CLIENTS } from '../capture/orchestrate.js';
import { findClient } from '../bench/clients.js';

interface Opts {
  clients?: string;
  repeat: number;
  out?: string;
  html?: string;
  format: 'table' | 'markdown' | 'json';
  timeout: number;
  records: number;
  samples: number;
  rate: number;
  snapshots: string;
  arrayElements: number;
  arraySamples: number;
  arrayRate: number | 'max';
  captureSeconds: number;
  captureFlushPeriod: number;
}

export function register(program: Command): void {
  program
    .command('bench')
    .description('run every client on the snapshot and/or monitor workloads, repeated, and compare them')
    .argument('[workload]', 'snapshot, monitor, array, capture, or all (= snapshot and monitor)', 'all')
    .option('--clients <list>', 'comma-separated clients (default: every client that runs the workload)')
    .option('--repeat <n>', 'runs per client and workload', intArg(1, 100), DEFAULTS.repeat)
    .option('--out <file>', 'write the JSON results (environment, options, every raw figure) here')
    .option('--html <file>', 'write an HTML report with charts here')
    .addOption(formatOption(['table', 'markdown', 'json'] as const))
    .addOption(timeoutOption())
    .option('--snapshots <ids>', `snapshot workloads, from ${SNAPSHOT_WORKLOADS.map((w) => w.id).join(', ')}`, DEFAULT_SNAPSHOTS.join(','))
    .addOption(recordsOption())
    .addOption(samplesOption())
    .addOption(rateOption())
    .addOption(arrayElementsOption(DEFAULTS.benchArrayElements, 1, 50_000_000, 'array: elements of the waveform'))
    .option('--array-samples <n>', 'array: updates to receive per run', intArg(2, 10_000), DEFAULTS.benchArraySamples)
    .addOption(arrayRateOption(DEFAULTS.benchArrayRate, false, "array: the IOC's refresh rate in Hz, or max (as fast as it can)"))
    .option('--capture-seconds <s>', 'capture: seconds each client captures at each load step', intArg(1, 3600), 5)
    .option('--capture-flush-period <ms>', 'capture: flush period', intArg(10, 600_000), 1000)
    .action(async (workload: string, opts: Opts) => {
      if (!['snapshot', 'monitor', 'array', 'capture', 'all'].includes(workload)) throw new UsageError(`workload must be snapshot, monitor, array, capture or all, got "${workload}"`);
      const format = opts.format;
      const capture = workload === 'capture' ? captureClients(opts.clients) : undefined;
      const clients = capture ? capture.map((c) => findClient(c)!) : opts.clients === undefined
        ? CLIENTS.filter((c) => workload === 'all' || c.workloads.includes(workload as Workload))
        : parseClientList(opts.clients, workload as Workload | 'all');
      const ids = opts.snapshots.split(',').map((s) => s.trim()).filter(Boolean);
      const snapshots = ids.map((id) => {
        const w = SNAPSHOT_WORKLOADS.find((x) => x.id === id);
        if (!w) throw new UsageError(`unknown snapshot workload "${id}": choose from ${SNAPSHOT_WORKLOADS.map((x) => x.id).join(', ')}`);
        return w;
      });
      exitOnSignals();
      const python = await prepareClients(clients, true, workload === 'snapshot' || workload === 'all');
      const report = await doctor();
      const progress = new Progress();
      const results = await runBench({
        clients,
        workloads: {
          snapshot: workload === 'snapshot' || workload === 'all' ? snapshots : [],
          monitor: workload === 'monitor' || workload === 'all',
          array: workload === 'array' ? { elements: opts.arrayElements, samples: opts.arraySamples, rate: opts.arrayRate } : undefined,
          capture: capture && { clients: capture, seconds: opts.captureSeconds, flushMs: opts.captureFlushPeriod },
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

/** The capture workload's clients: --clients, each one that can capture, or all of them. */
function captureClients(list: string | undefined): string[] {
  if (list === undefined) return [...CAPTURE_CLIENTS];
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(CAPTURE_CLIENTS as readonly string[]).includes(n)) throw new UsageError(`client ${n} does not run the capture workload: choose from ${CAPTURE_CLIENTS.join(', ')}`);
  }
  if (names.length === 0) throw new UsageError('--clients is empty');
  return [...new Set(names)];
}
