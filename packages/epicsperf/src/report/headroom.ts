// Renders the headroom workload: a row per client (the highest update rate it held with no loss,
// its CPU and memory there, and what it did past that point), then every (step, client) run.
import { headroomStepLabel, heldRate, type HeadroomClient, type HeadroomResults, type HeadroomStepResult } from '../results/index.js';
import { fmt, renderMarkdown, renderTable, type Column } from './table.js';

const rate = (v: number | undefined) => (v === undefined ? '-' : Math.round(v).toLocaleString('en-US'));

/** What a client did past its best step, in a few words. */
export function headroomNote(c: HeadroomClient, r: HeadroomResults): string {
  if (c.heldAll) {
    const top = c.best;
    return top?.iocLimited
      ? `held the highest step (IOC-limited at ${rate(top.iocUpdatesS)} updates/s)`
      : `held the highest step (${top ? headroomStepLabel(top.step) : '-'}): its limit is above the ramp`;
  }
  const p = c.past;
  if (!p) return `ran ${r.runs.filter((x) => x.client === c.client).length} of ${r.workload.steps.length} steps`;
  return `${headroomStepLabel(p.step)}${p.iocLimited ? ' (IOC-limited)' : ''}: ${p.failure?.text ?? 'failed'}`;
}

export function headroomTitle(r: HeadroomResults): string {
  const steps = r.workload.steps;
  if (r.workload.servers)
    return `Server headroom: each server's app posting scalar counters at rising steps (${steps.map(headroomStepLabel).join(', ')}), ${r.workload.seconds} s per step, to ${r.workload.servers.fanout.join(' and to ')} reference clients at once, until it posts short of the rate or a client loses updates, falls behind or fails`;
  const top = r.iocMaxUpdatesS !== undefined ? `; the IOC published up to ${rate(r.iocMaxUpdatesS)} updates/s` : '';
  return `Headroom: scalar monitors at rising steps (${steps.map(headroomStepLabel).join(', ')}), ${r.workload.seconds} s of updates per step, until a client loses updates, falls behind or fails${top}`;
}

export function headroomTable(r: HeadroomResults, markdown = false): string {
  const best = Math.max(0, ...r.clients.map((c) => heldRate(c.best) ?? 0));
  const servers = r.workload.servers !== undefined;
  const columns: Column<HeadroomClient>[] = [
    { header: servers ? 'server' : 'client', get: (c) => c.client },
    { header: 'loss-free updates/s', get: (c) => rate(heldRate(c.best)), align: 'right' },
    {
      header: 'best / this',
      get: (c) => {
        const v = heldRate(c.best);
        return v ? fmt(best / v, 2) : '-';
      },
      align: 'right',
    },
    { header: 'at', get: (c) => (c.best ? headroomStepLabel(c.best.step) : '-') },
    // With servers, the server's process (a client's CPU is in the steps table).
    servers
      ? { header: 'server CPU %', get: (c) => fmt(c.best?.run.iocCpuPercent?.mean, 1), align: 'right' }
      : { header: 'CPU %', get: (c) => fmt(c.best?.run.cpuPercent?.mean, 1), align: 'right' },
    ...(servers ? [] : [{ header: 'peak RSS MB', get: (c: HeadroomClient) => fmt(c.best?.run.peakRssMb, 0), align: 'right' as const }]),
    { header: 'past it', get: (c) => headroomNote(c, r) },
  ];
  return markdown ? renderMarkdown(r.clients, columns) : renderTable(r.clients, columns);
}

/** Every (step, client) run: the IOC's rate, the client's latency trend, CPU, memory, outcome. */
export function headroomStepsTable(r: HeadroomResults, markdown = false): string {
  const of = r.workload.servers ? 'server' : 'IOC';
  const columns: Column<HeadroomStepResult>[] = [
    { header: r.workload.servers ? 'server' : 'client', get: (x) => x.client },
    { header: 'step', get: (x) => headroomStepLabel(x.step) },
    { header: 'offered/s', get: (x) => rate(x.step.offeredUpdatesS), align: 'right' },
    { header: `${of}/s`, get: (x) => `${rate(x.iocUpdatesS)}${x.iocLimited ? ' (limited)' : ''}`, align: 'right' },
    // The IOC shares the cores: near 200% it starves its own send threads, which then merge updates.
    { header: `${of} CPU %`, get: (x) => fmt(x.run.iocCpuPercent?.mean, 0), align: 'right' },
    {
      header: 'latency ms first→last quarter',
      get: (x) => (x.latencyEarlyMs === undefined ? '-' : `${fmt(x.latencyEarlyMs, 1)} → ${fmt(x.latencyLateMs, 1)}`),
      align: 'right',
    },
    { header: r.workload.servers ? 'client CPU %' : 'CPU %', get: (x) => fmt(x.run.cpuPercent?.mean, 1), align: 'right' },
    { header: r.workload.servers ? 'client RSS MB' : 'peak RSS MB', get: (x) => fmt(x.run.peakRssMb, 0), align: 'right' },
    { header: 'held', get: (x) => (x.held ? 'yes' : `no: ${x.failure?.text ?? 'failed'}`) },
  ];
  return markdown ? renderMarkdown(r.runs, columns) : renderTable(r.runs, columns);
}

export function headroomText(r: HeadroomResults, markdown = false): string {
  return `\n${headroomTitle(r)}\n\n${headroomTable(r, markdown)}\nEvery step:\n\n${headroomStepsTable(r, markdown)}`;
}
