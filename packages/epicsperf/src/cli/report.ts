// `epicsperf report <file.json>...`: renders kept bench runs again (several files: one report,
// the runs side by side), as a table or Markdown on stdout, and as HTML or Markdown files.
import type { Command } from 'commander';
import { writeAtomic } from 'epics-ops';
import { loadResults } from '../results/store.js';
import { runLabel } from '../report/html.js';
import { benchHtml, renderRuns } from '../workloads/index.js';
import { formatOption } from '../options.js';

export function register(program: Command): void {
  program
    .command('report')
    .description('render kept bench runs again: one report, several runs side by side')
    .argument('<files...>', 'bench result files (JSON, from `bench` or `results`)')
    .option('--html <file>', 'write the HTML report here')
    .option('--markdown <file>', 'write the Markdown tables here')
    .addOption(formatOption(['table', 'markdown'] as const))
    .action(async (files: string[], opts: { html?: string; markdown?: string; format: 'table' | 'markdown' }) => {
      const runs = files.map(loadResults);
      const labels = runs.map((r, i) => runLabel(r, i, runs.length));
      if (opts.html) writeAtomic(opts.html, await benchHtml(runs));
      if (opts.markdown) writeAtomic(opts.markdown, renderRuns(runs, labels, true));
      process.stdout.write(renderRuns(runs, labels, opts.format === 'markdown'));
    });
}
