// Renders the connect storm: per server and protocol, the channels answered, the time to the last
// answer, and the storm's cost to the server (CPU seconds, peak memory) and to the client.
import type { StormRun, StormWorkload } from '../results/index.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

export function stormTitle(w: StormWorkload): string {
  return `Connect storm: one client asks a fresh server for ${w.channels.toLocaleString('en-US')} channels at once and reads each (its snapshot, ${w.timeoutMs} ms timeout per channel)`;
}

const columns: Column<StormRun>[] = [
  { header: 'server', get: (r) => r.server },
  { header: 'protocol', get: (r) => r.protocol },
  { header: 'answered', get: (r) => r.answered.toLocaleString('en-US'), align: 'right' },
  { header: 'all answered in s', get: (r) => (r.ok ? fmt((r.wallMs ?? Number.NaN) / 1000, 2) : '-'), align: 'right' },
  { header: 'server CPU s', get: (r) => fmt(r.serverCpuS, 2), align: 'right' },
  { header: 'server peak RSS MB', get: (r) => fmt(r.serverPeakRssMb, 0), align: 'right' },
  { header: 'client', get: (r) => r.client },
  { header: 'client CPU s', get: (r) => fmt(r.clientCpuS, 2), align: 'right' },
  { header: 'version', get: (r) => r.version ?? '' },
  { header: 'note', get: (r) => r.error ?? '' },
];

export function stormTable(runs: readonly StormRun[], markdown = false): string {
  return markdown ? renderMarkdown(runs, columns) : renderTable(runs, columns);
}

/** A storm run in a few words, for the progress line. */
export function stormOutcome(r: StormRun): string {
  return r.ok ? `all ${r.answered.toLocaleString('en-US')} in ${fmt((r.wallMs ?? Number.NaN) / 1000, 2)} s` : (r.error ?? 'failed');
}
