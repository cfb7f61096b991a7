// Every bench workload, in run and report order: a new workload is one module of this folder
// and one entry here. The reports of runs, bound to the list.
import type { BenchResults } from '../results/index.js';
import { figuresOf, ranOf, type WorkloadFigures } from '../report/figures.js';
import { renderBench as renderWith, renderRuns as renderRunsWith } from '../report/bench.js';
import { benchHtml as htmlWith } from '../report/html.js';
import { compareRuns as compareWith, type CompareRow } from '../report/compare.js';
import { environmentRows as environmentWith, type EnvRow } from '../report/environment.js';
import type { BenchWorkload } from './workload.js';
import { snapshot } from './snapshot.js';
import { monitor } from './monitor.js';
import { array } from './array.js';
import { arrayPut } from './array-put.js';
import { latency } from './latency.js';
import { capture } from './capture.js';
import { headroom } from './headroom.js';
import { load } from './load.js';
import { crossing } from './crossing.js';
import { storm } from './storm.js';

export const WORKLOADS: readonly BenchWorkload[] = [snapshot, monitor, array, arrayPut, latency, crossing, storm, capture, headroom, load];

export function findWorkload(name: string): BenchWorkload | undefined {
  return WORKLOADS.find((w) => w.name === name);
}

/** Each workload's entries in a run, with its main figure per client. */
export const workloadFigures = (r: BenchResults): WorkloadFigures[] => figuresOf(WORKLOADS, r);
export const ran = (r: BenchResults): { workloads: string[]; clients: string[] } => ranOf(WORKLOADS, r);
export const renderBench = (r: BenchResults, markdown: boolean): string => renderWith(WORKLOADS, r, markdown);
export const renderRuns = (runs: readonly BenchResults[], labels: readonly string[], markdown: boolean): string =>
  renderRunsWith(WORKLOADS, runs, labels, markdown);
export const benchHtml = (runs: BenchResults | readonly BenchResults[]): Promise<string> => htmlWith(WORKLOADS, runs);
export const compareRuns = (a: BenchResults, b: BenchResults): CompareRow[] => compareWith(WORKLOADS, a, b);
export const environmentRows = (runs: readonly BenchResults[]): EnvRow[] => environmentWith(WORKLOADS, runs);
