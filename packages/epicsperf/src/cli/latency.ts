// `epicsperf latency`: per array size, the client puts an array to the built-in IOC and waits for
// its own monitor update of it; round trip and one-way percentiles per size and the fitted fixed
// cost and MB/s (src/bench/latency.ts), one row set per client.
import type { Command } from 'commander';
import { clientNames, findClient, type ClientSpec } from '../clients/index.js';
import { runLatency } from '../bench/latency.js';
import { whyNoLatency } from '../bench/latency.js';
import { latencyTables, latencyTitle } from '../report/latency.js';
import { UsageError } from '../errors.js';
import { DEFAULTS } from '../defaults.js';
import { exitOnSignals, orClose, placement, prepareClients, Progress, type HostOpts } from './common.js';
import { formatOption, hostsOption, keysOption, listArg, placeOption, serverOption } from '../options.js';
import { countOption, latencyTypeOption, sizesOption } from '../workloads/latency.js';
import type { LatencyRun, LatencyWorkload } from '../results/index.js';

interface Opts extends HostOpts {
  client: string;
  sizes: number[];
  type: string;
  count: number;
  format: 'table' | 'json';
}

export function register(program: Command): void {
  program
    .command('latency')
    .description("time a put and the client's own monitor update of it, per array size, against the built-in IOC")
    .option('--client <list>', 'client(s), comma-separated (see `epicsperf clients`)', DEFAULTS.client)
    .addOption(sizesOption())
    .addOption(latencyTypeOption())
    .addOption(countOption())
    .addOption(formatOption(['table', 'json'] as const))
    .addOption(serverOption())
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .action(async (opts: Opts) => {
      const clients: ClientSpec[] = listArg(opts.client).map((name) => {
        const spec = findClient(name);
        if (!spec) throw new UsageError(`unknown client "${name}": choose from ${clientNames().join(', ')}`);
        return spec;
      });
      if (clients.length === 0) throw new UsageError('--client is empty');
      exitOnSignals();
      const runnable = clients.filter((c) => c.tasks.includes('latency'));
      const python = await prepareClients(runnable, true);
      const pl = await placement(opts, runnable, python);
      const workload: LatencyWorkload = { sizes: opts.sizes, elementType: opts.type, samplesPerSize: opts.count };
      const progress = new Progress();
      const ioc = await orClose(pl, pl.startIoc({ records: 1, rate: 0, arrayElements: 0, latencyElements: Math.max(...opts.sizes) }));
      const runs: LatencyRun[] = [];
      try {
        for (const client of clients) {
          if (!client.tasks.includes('latency')) {
            runs.push({ client: client.name, ok: false, unsupported: true, error: whyNoLatency(client), points: [] });
            continue;
          }
          runs.push(
            await runLatency({
              client,
              python,
              env: ioc.env,
              prefix: ioc.prefix,
              workload,
              onProgress: (s) => progress.update(`${client.name}: ${s}`),
              ...pl.runOn(client.name),
            }),
          );
        }
      } finally {
        progress.done();
        await ioc.stop();
        await pl.close();
      }
      process.stdout.write(
        opts.format === 'json' ? JSON.stringify({ workload, runs }, null, 2) + '\n' : `${latencyTitle(workload)}\n\n${latencyTables(runs)}`,
      );
      process.exitCode = runs.every((r) => r.ok) ? 0 : 1;
    });
}
