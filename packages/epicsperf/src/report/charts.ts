// The report's charts as Vega-Lite specifications, rendered to static SVG by vega in Node at
// report time, so the HTML needs no script and no network to show them.
import type { TopLevelSpec } from 'vega-lite';
import type { LatencyRun } from '../results/index.js';
import { toSvg } from './svg.js';
import { rank, type WorkloadFigures } from './figures.js';

const FONT = 'system-ui, sans-serif';
/** Results that failed a check or were stopped: grey, dashed, and said so in red. */
export const INCOMPLETE_FILL = '#c8c8c8';
export const FAIL_COLOUR = '#c62828';

interface BarDatum {
  client: string;
  run: string;
  median: number;
  min: number;
  max: number;
  passed: boolean;
  label: string;
}

/**
 * One workload's main figure, one bar per client (per run when several runs are shown side by
 * side): the median as the bar, min-max over the repeats as a line. Clients that passed every
 * check come first; the others follow, greyed and dashed, labelled in red. A client without a
 * figure gets a label only.
 */
export async function figureChart(runs: readonly { label: string; w: WorkloadFigures }[]): Promise<string> {
  const data: BarDatum[] = [];
  const clients: string[] = [];
  for (const { label, w } of runs) {
    for (const c of rank(w).order) {
      if (!clients.includes(c.client)) clients.push(c.client);
      const passed = c.problems.length === 0 && c.stat !== undefined;
      const digits = (v: number) => (v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3);
      const value = c.stat ? c.stat.median.toFixed(digits(c.stat.median)) : '';
      const flag =
        c.stoppedAfterS !== undefined
          ? `stopped after ${Math.round(c.stoppedAfterS)} s`
          : c.stat
            ? 'incomplete'
            : c.problems.length
              ? 'no result'
              : 'no figure';
      data.push({
        client: c.client,
        run: label,
        passed,
        median: c.stat?.median ?? 0,
        min: c.stat?.min ?? 0,
        max: c.stat?.max ?? 0,
        label: passed ? value : `${value ? `${value} ` : ''}✗ ${flag}`,
      });
    }
  }
  const w0 = runs[0]!.w;
  const several = runs.length > 1;
  // Reference figures (the capture's disk rate, the study's): a dashed line each, labelled.
  const num = (v: number) => v.toFixed(v >= 100 || Number.isInteger(v) ? 0 : 1);
  const refs = runs
    .flatMap(({ label, w }) =>
      (w.references ?? []).map((ref) => ({
        value: ref.value,
        to: ref.to ?? ref.value,
        label: `${ref.label}${several ? ` (${label})` : ''} ${num(ref.value)}${ref.to !== undefined ? `-${num(ref.to)}` : ''}`,
      })),
    )
    .map((x, i) => ({ ...x, row: i % 2 }));
  const top = Math.max(...data.map((d) => d.max), ...refs.map((x) => x.to), 1e-9);
  const x = {
    field: 'median',
    type: 'quantitative' as const,
    title: `${w0.figure} (${w0.unit}), ${w0.better} is better`,
    scale: { domain: [0, top * 1.45], nice: false },
  };
  const y = { field: 'client', type: 'nominal' as const, sort: clients, title: null };
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 560,
    height: { step: several ? 12 * runs.length + 6 : 22 },
    background: 'white',
    config: { font: FONT, axis: { labelFontSize: 12, titleFontSize: 12 }, legend: { labelFontSize: 12, titleFontSize: 12 } },
    layer: [
      {
        data: { values: data },
        encoding: { y, ...(several && { yOffset: { field: 'run', type: 'nominal', sort: runs.map((r) => r.label) } }) },
        layer: [
          {
            mark: { type: 'bar', height: { band: 0.8 } },
            encoding: {
              x,
              color: {
                condition: { test: '!datum.passed', value: INCOMPLETE_FILL },
                field: 'run',
                type: 'nominal',
                sort: runs.map((r) => r.label),
                title: 'run',
                ...(several ? {} : { legend: null, scale: { range: ['#3b6ea8'] } }),
              },
              stroke: { condition: { test: '!datum.passed', value: FAIL_COLOUR }, value: null },
              strokeDash: { condition: { test: '!datum.passed', value: [4, 2] }, value: [1, 0] },
            },
          },
          {
            transform: [{ filter: 'datum.max > datum.min' }],
            mark: { type: 'rule', color: '#222', strokeWidth: 1.5 },
            encoding: { x: { field: 'min', type: 'quantitative' }, x2: { field: 'max' } },
          },
          {
            mark: { type: 'text', align: 'left', dx: 5, fontSize: 11 },
            encoding: {
              x: { field: 'max', type: 'quantitative' },
              text: { field: 'label' },
              color: { condition: { test: '!datum.passed', value: FAIL_COLOUR }, value: '#222' },
            },
          },
        ],
      },
      ...(refs.length
        ? [
            {
              data: { values: refs },
              // A dashed line at each reference (a light band over its range, when it has one), labelled
              // above the plot, alternately higher and lower so that close ones do not overlap.
              layer: [
                {
                  transform: [{ filter: 'datum.to > datum.value' }],
                  mark: { type: 'rect' as const, color: '#888', opacity: 0.12 },
                  encoding: { x: { field: 'value', type: 'quantitative' as const }, x2: { field: 'to' } },
                },
                {
                  mark: { type: 'rule' as const, color: '#555', strokeDash: [6, 3] },
                  encoding: { x: { field: 'value', type: 'quantitative' as const } },
                },
                ...[0, 1].map((row) => ({
                  transform: [{ filter: `datum.row === ${row}` }],
                  mark: { type: 'text' as const, align: 'left' as const, baseline: 'bottom' as const, dx: 2, fontSize: 10, color: '#555' },
                  encoding: { x: { field: 'value', type: 'quantitative' as const }, y: { value: -4 - 12 * row }, text: { field: 'label' } },
                })),
              ],
            },
          ]
        : []),
    ],
  };
  return toSvg(spec);
}

/** Latency against payload size, both on log scales: the median round trip per client, with
 *  its p99 dashed; sizes that failed are left out (the latency table says why). */
export async function latencyChart(runs: readonly LatencyRun[]): Promise<string> {
  const data = runs.flatMap((r) =>
    r.points
      .filter((p) => p.ok && p.p50Ms > 0)
      .flatMap((p) => [
        { client: r.client, bytes: p.bytes, ms: p.p50Ms, what: 'median' },
        { client: r.client, bytes: p.bytes, ms: Math.max(p.p99Ms, p.p50Ms), what: 'p99' },
      ]),
  );
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 560,
    height: 300,
    background: 'white',
    config: { font: FONT, axis: { labelFontSize: 12, titleFontSize: 12 }, legend: { labelFontSize: 12, titleFontSize: 12 } },
    data: { values: data },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'bytes', type: 'quantitative', scale: { type: 'log' }, title: 'payload (bytes, log scale)' },
      y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'put to update (ms, log scale), lower is better' },
      color: { field: 'client', type: 'nominal', title: 'client' },
      strokeDash: {
        field: 'what',
        type: 'nominal',
        title: 'percentile',
        scale: {
          domain: ['median', 'p99'],
          range: [
            [1, 0],
            [5, 3],
          ],
        },
      },
      detail: { field: 'what' },
    },
  };
  return toSvg(spec);
}
