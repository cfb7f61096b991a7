// Renders the load workload: a row per client (how many clients it served with no loss and what
// limited it), a row per (client, step) with the aggregate figures, each host's CPU, the IOC's and
// the fairness, the runners that failed, and the HTML chart of updates/s and p99 against clients.
import type { TopLevelSpec } from 'vega-lite';
import { loadStepLabel, type LoadClient, type LoadResults, type LoadRunner, type LoadStepResult } from '../results/index.js';
import { toSvg } from './svg.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

const int = (v: number | undefined) => (v === undefined ? '-' : Math.round(v).toLocaleString('en-US'));
const pct = (v: number | undefined) => (v === undefined ? '-' : (100 * v).toFixed(v < 0.995 ? 1 : 0));

/** What limited a client, in a few words. */
export function loadLimitNote(c: LoadClient, r: LoadResults): string {
  const at = c.limit.atRunnersPerHost;
  return at === undefined ? c.limit.text : `at ${loadStepLabel(at, stepHosts(r))}: ${c.limit.text}`;
}

/** Hosts that ran runners (the IOC's host is among `hosts` even when it ran none). */
const stepHosts = (r: LoadResults) => r.steps[0]?.hosts.length ?? r.hosts.length;

export function loadTitle(r: LoadResults): string {
  const w = r.workload;
  const hosts = stepHosts(r);
  if (w.servers)
    return (
      `Server load: N runners of each protocol's reference client on this host (N = ${w.steps.join(', ')}), each monitoring ` +
      `${w.records.toLocaleString('en-US')} counters that each server's app posts at ${w.rateHz} Hz (the IOC columns are the server's), ${w.seconds} s per step; ` +
      `a server stops at the first step that loses updates, whose p99 latency grows ${fmt(w.latencyGrowthMs, 0)} ms past its first step's, or where a runner fails`
    );
  return (
    `Load: N runners of one client on ${hosts === 1 ? 'one host' : `each of ${hosts} hosts`} (N = ${w.steps.join(', ')}), each monitoring ` +
    `${w.records.toLocaleString('en-US')} counters at ${w.rateHz} Hz, against one IOC on ${r.iocHost}, ${w.seconds} s per step; ` +
    `a client stops at the first step that loses updates, whose p99 latency grows ${fmt(w.latencyGrowthMs, 0)} ms past its first step's, or where a runner fails`
  );
}

export function loadTable(r: LoadResults, markdown = false): string {
  const step = (c: LoadClient) => r.steps.find((s) => s.client === c.client && s.runnersPerHost === c.bestRunnersPerHost);
  const columns: Column<LoadClient>[] = [
    { header: r.workload.servers ? 'server' : 'client', get: (c) => c.client },
    { header: 'clients served', get: (c) => String(c.served), align: 'right' },
    { header: 'updates/s there', get: (c) => int(c.bestUpdatesS), align: 'right' },
    { header: 'p99 ms there', get: (c) => fmt(step(c)?.latencyMs?.p99, 1), align: 'right' },
    { header: 'limit', get: (c) => c.limit.kind },
    { header: 'what limited it', get: (c) => loadLimitNote(c, r) },
  ];
  return markdown ? renderMarkdown(r.clients, columns) : renderTable(r.clients, columns);
}

/** Every (client, step): aggregate rate and loss, latency, CPU per host and of the IOC, fairness. */
export function loadStepsTable(r: LoadResults, markdown = false): string {
  const hosts = [...new Set(r.steps.flatMap((s) => s.hosts.map((h) => h.host)))];
  const columns: Column<LoadStepResult>[] = [
    { header: 'client', get: (x) => x.client },
    { header: 'step', get: (x) => loadStepLabel(x.runnersPerHost, x.hosts.length) },
    { header: 'clients', get: (x) => String(x.totalClients), align: 'right' },
    { header: 'offered/s', get: (x) => int(x.offeredUpdatesS), align: 'right' },
    { header: 'received/s', get: (x) => int(x.updatesS), align: 'right' },
    { header: 'lost', get: (x) => int(x.missed), align: 'right' },
    { header: 'p50/p99 ms', get: (x) => (x.latencyMs ? `${fmt(x.latencyMs.p50, 1)}/${fmt(x.latencyMs.p99, 1)}` : '-'), align: 'right' },
    ...hosts.map(
      (h): Column<LoadStepResult> => ({
        header: `${h} CPU %`,
        get: (x) => fmt(x.hosts.find((y) => y.host === h)?.cpuPercent, 0),
        align: 'right',
      }),
    ),
    { header: 'IOC CPU %', get: (x) => fmt(x.iocCpuPercent, 0), align: 'right' },
    { header: 'IOC/s', get: (x) => int(x.iocUpdatesS), align: 'right' },
    { header: 'ramp Hz', get: (x) => int(x.fairness?.rampRateHz), align: 'right' },
    {
      header: 'steady/ramp %',
      get: (x) => (x.fairness ? `${pct(x.fairness.steadyFraction)}/${pct(x.fairness.rampFraction)}` : '-'),
      align: 'right',
    },
    { header: 'held', get: (x) => (x.held ? 'yes' : `no (${x.limit?.kind ?? 'failed'}): ${x.limit?.text ?? 'failed'}`) },
  ];
  return markdown ? renderMarkdown(r.steps, columns) : renderTable(r.steps, columns);
}

/** The runners that failed, one row each with why (empty when none did). */
export function loadFailuresTable(r: LoadResults, markdown = false): string {
  const rows = r.steps.flatMap((s) => s.runners.filter((x) => !x.ok).map((x) => ({ s, x })));
  if (rows.length === 0) return '';
  const columns: Column<{ s: LoadStepResult; x: LoadRunner }>[] = [
    { header: 'client', get: ({ s }) => s.client },
    { header: 'step', get: ({ s }) => loadStepLabel(s.runnersPerHost, s.hosts.length) },
    { header: 'runner', get: ({ x }) => `${x.host} #${x.index}` },
    { header: 'why', get: ({ x }) => x.error ?? 'failed' },
  ];
  return markdown ? renderMarkdown(rows, columns) : renderTable(rows, columns);
}

/** Every step's table, then the runners that failed and the steps whose ramp could not be set. */
export function loadDetails(r: LoadResults, markdown = false): string {
  const failed = loadFailuresTable(r, markdown);
  const ramp = r.steps
    .filter((s) => s.rampError)
    .map((s) => `${s.client} at ${loadStepLabel(s.runnersPerHost, s.hosts.length)}: no fairness figure: ${s.rampError}\n`);
  return (
    `Every step (steady/ramp %: the share of the counters' and of the ramping PV's updates that the fairness runners received in the window):\n\n` +
    `${loadStepsTable(r, markdown)}${failed ? `\nRunners that failed:\n\n${failed}` : ''}${ramp.length ? `\n${ramp.join('')}` : ''}`
  );
}

export function loadText(r: LoadResults, markdown = false): string {
  return `\n${loadTitle(r)}\n\n${loadTable(r, markdown)}\n${loadDetails(r, markdown)}`;
}

/** Aggregate updates/s and p99 latency against the clients served, a line per client; a step that
 *  did not hold is a hollow red point. */
export async function loadChart(r: LoadResults): Promise<string> {
  const data = r.steps.map((s) => ({
    client: s.client,
    clients: s.totalClients,
    updatesS: s.updatesS,
    p99: s.latencyMs?.p99 ?? null,
    held: s.held ? 'held' : 'did not hold',
  }));
  const panel = (field: string, title: string) => ({
    width: 560,
    height: 200,
    layer: [
      { mark: { type: 'line' as const } },
      {
        mark: { type: 'point' as const, filled: true, size: 60 },
        encoding: {
          shape: {
            field: 'held',
            type: 'nominal' as const,
            title: 'step',
            scale: { domain: ['held', 'did not hold'], range: ['circle', 'cross'] },
          },
        },
      },
    ],
    encoding: {
      x: {
        field: 'clients',
        type: 'quantitative' as const,
        title: 'clients (load runners on every host)',
        axis: { tickMinStep: 1, format: 'd' },
      },
      y: { field, type: 'quantitative' as const, title },
      color: { field: 'client', type: 'nominal' as const, title: 'client' },
    },
  });
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    config: {
      font: 'system-ui, sans-serif',
      axis: { labelFontSize: 12, titleFontSize: 12 },
      legend: { labelFontSize: 12, titleFontSize: 12 },
    },
    data: { values: data },
    vconcat: [panel('updatesS', 'updates/s received, all clients'), panel('p99', 'p99 latency (ms), lower is better')],
  };
  return toSvg(spec);
}
