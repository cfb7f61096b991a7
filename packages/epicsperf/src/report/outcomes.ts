// A bench step's one-line outcome, per workload, for the progress line: what a finished step
// (one client, one run or one load step) found, or why it failed.
import {
  heldRate,
  type ArrayPutRun,
  type CaptureStepResult,
  type HeadroomStepResult,
  type LatencyRun,
  type LoadStepResult,
  type MonitorRun,
  type SnapshotRun,
} from '../results/index.js';
import { plural } from './figures.js';

export const snapshotOutcome = (r: SnapshotRun) =>
  r.wallMs !== undefined && !r.error
    ? `${r.answered}/${r.answered + r.failed} answered in ${(r.wallMs / 1000).toFixed(2)} s`
    : (r.error ?? 'failed');
export const captureOutcome = (r: CaptureStepResult) =>
  r.kept ? `kept: ${r.mbS?.toFixed(1) ?? '-'} MB/s, ${Math.round(r.updatesS ?? 0)} updates/s` : (r.run.error ?? `${r.lost} updates lost`);
export const headroomOutcome = (r: HeadroomStepResult) =>
  (r.held
    ? `held: ${Math.round(heldRate(r) ?? 0)} updates/s, CPU ${r.run.cpuPercent?.mean.toFixed(0) ?? '-'} %`
    : (r.failure?.text ?? 'failed')) +
  (r.iocLimited ? ` (IOC-limited: ${Math.round(r.iocUpdatesS ?? 0)} of ${r.step.offeredUpdatesS} updates/s)` : '');
export const loadOutcome = (r: LoadStepResult) =>
  (r.held
    ? `held: ${r.totalClients} client${r.totalClients === 1 ? '' : 's'}, ${Math.round(r.updatesS).toLocaleString('en-US')} updates/s, p99 ${r.latencyMs?.p99.toFixed(1) ?? '-'} ms`
    : (r.limit?.text ?? 'failed')) +
  (r.fairness
    ? ` (delivered: steady ${(100 * r.fairness.steadyFraction).toFixed(1)}%, ramp ${(100 * r.fairness.rampFraction).toFixed(1)}% at ${Math.round(r.fairness.rampRateHz)} Hz)`
    : '');
export const monitorOutcome = (r: MonitorRun) =>
  r.error
    ? r.error
    : r.array
      ? `${r.array.mElementsPerSecond.toFixed(1)} M elements/s${r.array.server ? ` (${r.array.server.fraction.toFixed(2)} of the IOC's rate)` : ''}`
      : `CPU ${r.cpuPercent?.mean.toFixed(1) ?? '-'} %`;

export const arrayPutOutcome = (r: ArrayPutRun): string =>
  r.error ?? `${r.putsPerSecond?.toFixed(1) ?? '-'} puts/s, the IOC checked ${r.ioc?.received ?? 0}/${r.puts - r.failedPuts}`;

export function latencyOutcome(r: LatencyRun): string {
  if (r.error) return r.error;
  const last = r.points[r.points.length - 1];
  return last ? `p50 ${last.p50Ms.toFixed(3)} ms at ${plural(last.elements, 'element')}` : 'no result';
}
