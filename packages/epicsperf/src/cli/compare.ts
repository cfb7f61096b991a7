// `epicsperf compare <a.json> <b.json>`: per workload and client A, B, their ratio and whether the
// difference is larger than the run-to-run spread; exit 0 unless a file is bad, or with
// --fail-on-regression PCT, 1 when B is worse than A by more than PCT % beyond the spread.
import type { Command } from 'commander';
import { writeAtomic } from 'epics-ops';
import { loadResults } from '../results/store.js';
import { compareHtml, compareText, regressions } from '../report/compare.js';
import { compareRuns } from '../workloads/index.js';
import { runLabel } from '../report/html.js';
import { formatOption, numberArg } from '../options.js';

export function register(program: Command): void {
  program
    .command('compare')
    .description('compare two kept bench runs: ratio per workload and client, and whether it exceeds the spread')
    .argument('<a>', 'the reference run (JSON)')
    .argument('<b>', 'the run to hold against it (JSON)')
    .addOption(formatOption(['table', 'markdown', 'html'] as const))
    .option('--html <file>', 'also write the comparison as HTML here')
    .option(
      '--fail-on-regression <pct>',
      'exit 1 when B is worse than A by more than PCT % and the test does not put it within the spread',
      numberArg(0),
    )
    .action((a: string, b: string, opts: { format: 'table' | 'markdown' | 'html'; html?: string; failOnRegression?: number }) => {
      const A = loadResults(a);
      const B = loadResults(b);
      const labels: [string, string] = [`${a} (${runLabel(A, 0, 1)})`, `${b} (${runLabel(B, 0, 1)})`];
      const rows = compareRuns(A, B);
      if (opts.html) writeAtomic(opts.html, compareHtml(rows, labels));
      process.stdout.write(opts.format === 'html' ? compareHtml(rows, labels) : compareText(rows, labels, opts.format === 'markdown'));
      if (opts.failOnRegression !== undefined) {
        const bad = regressions(rows, opts.failOnRegression);
        if (bad.length) {
          process.stderr.write(
            `epicsperf: ${bad.length} regression(s) beyond ${opts.failOnRegression}%: ${bad.map((r) => `${r.workload} ${r.client} +${r.worsePct!.toFixed(0)}%`).join(', ')}\n`,
          );
          process.exitCode = 1;
        }
      }
    });
}
