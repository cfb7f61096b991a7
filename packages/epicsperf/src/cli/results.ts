// `epicsperf results`: the kept bench runs, oldest first: date, host, profile, clients,
// workloads and one headline figure each (the best client on the run's first workload).
import type { Command } from 'commander';
import { listRuns, resultsDir } from '../results/store.js';
import { renderTable } from '../report/table.js';
import { figureText } from '../report/html.js';
import { rank } from '../report/figures.js';
import { ran, workloadFigures } from '../workloads/index.js';
import type { BenchResults } from '../results/index.js';
import { formatOption } from '../options.js';

/** The run's headline: the best client that passed every check on its first workload. */
export function headline(r: BenchResults): string {
  for (const w of workloadFigures(r)) {
    const best = rank(w).best;
    if (best) return `${w.key}: ${best.client} ${figureText(best.stat?.median, w.unit)}`;
  }
  return 'no client passed every check';
}

export function register(program: Command): void {
  program
    .command('results')
    .description('list the kept bench runs (date, host, clients, workloads, a headline figure)')
    .option('--results-dir <dir>', 'the results folder (default: $EPICSPERF_RESULTS, else results/ under EPICSPERF_HOME)')
    .addOption(formatOption(['table', 'json'] as const))
    .action((opts: { resultsDir?: string; format: 'table' | 'json' }) => {
      const dir = opts.resultsDir ?? resultsDir();
      const runs = listRuns(dir);
      const rows = runs.map((k) => {
        const r = k.results;
        if (!r) return { file: k.file, date: '', host: '', profile: '', clients: '', workloads: '', headline: k.error ?? '' };
        const { workloads, clients } = ran(r);
        return {
          file: k.file,
          date: r.startedAt.slice(0, 19).replace('T', ' '),
          host: r.host,
          profile: r.options.profile,
          clients: `${clients.length}: ${clients.join(',')}`,
          workloads: workloads.join(', '),
          headline: headline(r),
        };
      });
      if (opts.format === 'json') {
        process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
        return;
      }
      if (rows.length === 0) {
        process.stdout.write(`no kept runs in ${dir}\n`);
        return;
      }
      process.stdout.write(
        `${dir}\n\n` +
          renderTable(rows, [
            { header: 'date (UTC)', get: (x) => x.date },
            { header: 'host', get: (x) => x.host },
            { header: 'profile', get: (x) => x.profile },
            { header: 'clients', get: (x) => (x.clients.length > 40 ? `${x.clients.slice(0, 39)}…` : x.clients) },
            { header: 'workloads', get: (x) => x.workloads },
            { header: 'headline', get: (x) => x.headline },
            { header: 'file', get: (x) => x.file.split('/').pop() ?? x.file },
          ]),
      );
    });
}
