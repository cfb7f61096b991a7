// The monitor workload for one client: start its runner, let it subscribe to the IOC's counters
// until every PV has its samples, measure its CPU and memory from outside, then check the samples.
import { CpuSampler, type Meter, type Reading } from '../procstat.js';
import { checkArraySamples, checkMonitorSamples } from './checks.js';
import type { Sample } from './samples.js';
import { shipSamples } from './session.js';
import type { ClientSpec } from '../clients/index.js';
import { stat, type MonitorRun } from '../results/index.js';
import type { Host } from '../hosts/host.js';
import { LocalHost } from '../hosts/local-host.js';
import type { IocStats } from '../ioc/stats.js';
import { runOnce } from '../launch/run.js';

export interface MonitorRunOptions {
  /** The runner's task: 'monitor', many counters; 'array', one big waveform (docs/runners.md). Default 'monitor'. */
  task?: 'monitor' | 'array';
  client: ClientSpec;
  python: string;
  /** Where the runner runs (default: here). */
  host?: Host;
  env: Record<string, string>;
  names: readonly string[];
  samples: number;
  /** The IOC's counter rate (Hz), for deadlines and the staleness check. */
  rate: number;
  /** The IOC process, measured over the same window. */
  iocMeter?: Meter;
  /** Time after the runner is connected before CPU sampling starts (ms, default 1000). */
  warmupMs?: number;
  /** Kill the runner if its resident memory passes this many MiB (default 4096): a client that
   *  falls behind queues updates without bound, and the machine is shared. */
  maxRssMb?: number;
  /** The client's deadline for the whole run (ms): past it the runner is stopped (ClientDeadline). */
  clientDeadlineMs?: number;
  /** Called with a short status while it runs (for a live line). */
  onProgress?: (text: string) => void;
  /** The array workload: what the waveform holds, and the IOC's own counts for its rate. */
  array?: ArrayRunOptions;
  /** Given every sample shipped, before they are checked (the headroom workload's latency trend). */
  onSamples?: (samples: readonly Sample[]) => void;
}

export interface ArrayRunOptions {
  elements: number;
  type?: string;
  /** Have the runner compare every element, not only the first, middle and last (tests). */
  checkAll?: boolean;
  /** The IOC's stats (Ioc.stats): its published rate over the collection window. */
  iocStats?: () => Promise<IocStats>;
}

/** How a run killed for its memory begins its error. */
export const MEMORY_KILL = 'killed: its memory grew past';
/** The memory a runner may use before it is killed (MiB), unless told otherwise. */
export const DEFAULT_MAX_RSS_MB = 4096;

export async function runMonitor(o: MonitorRunOptions): Promise<MonitorRun> {
  const host = o.host ?? new LocalHost(o.python);
  const task = o.task ?? 'monitor';
  const extra = task === 'array' && o.array?.checkAll ? ['--check-all'] : [];
  const runner = host.startRunner({
    client: o.client.name,
    task,
    names: o.names,
    args: ['--samples', String(o.samples), ...extra],
    env: o.env,
  });
  const result: MonitorRun = { client: o.client.name, ok: false, ...(o.host && { host: o.host.name }) };
  let sampler: CpuSampler | undefined;
  let iocSampler: CpuSampler | undefined;
  let warm: NodeJS.Timeout | undefined;
  const maxRssMb = o.maxRssMb ?? DEFAULT_MAX_RSS_MB;
  let overMemory = 0;
  const guard = setInterval(() => {
    const m = runner.meter.read();
    if (m && m.rssKb / 1024 > maxRssMb) {
      overMemory = m.rssKb / 1024;
      void runner.kill();
    }
  }, 500);
  const reason = (): string | undefined =>
    overMemory ? `${MEMORY_KILL} ${maxRssMb} MiB (${Math.round(overMemory)} MiB): it fell behind the updates` : undefined;
  try {
    return await runOnce(runner, result, { deadlineMs: o.clientDeadlineMs, onProgress: o.onProgress, reason }, async (progress) => {
      progress('starting');
      const ready = await runner.next('ready', 60_000, 'ready');
      result.version = typeof ready.version === 'string' ? ready.version : undefined;
      // The IOC's count before the client subscribes: every update after its first was posted later.
      const stats0 = task === 'array' ? await o.array?.iocStats?.() : undefined;
      const startedAt = Date.now() / 1000;
      const t0 = performance.now();
      runner.send('start');
      progress('connecting');
      await runner.next('connected', 30_000 + o.names.length * 20, 'all PVs connected');
      result.connectMs = performance.now() - t0;
      progress('collecting');
      // The whole collection window, for runs too short for one sample after the warm-up.
      const window0 = runner.meter.read();
      const iocWindow0 = o.iocMeter?.read();
      sampler = new CpuSampler(runner.meter);
      iocSampler = o.iocMeter ? new CpuSampler(o.iocMeter) : undefined;
      warm = setTimeout(() => {
        sampler!.start();
        iocSampler?.start();
      }, o.warmupMs ?? 1000);
      const expectedS = o.samples / Math.max(o.rate, 0.1);
      const complete = await runner.next('complete', 30_000 + expectedS * 3000, `${o.samples} samples per PV`);
      result.collectS = (performance.now() - t0) / 1000;
      const stats1 = stats0 ? await o.array?.iocStats?.() : undefined;
      clearTimeout(warm);
      const cpu = sampler.stop();
      const window1 = runner.meter.read();
      const over = (a: Reading | undefined, b: Reading | undefined): number[] =>
        a && b && b.t > a.t ? [((b.cpuS - a.cpuS) / ((b.t - a.t) / 1000)) * 100] : [];
      if (cpu.length === 0) cpu.push(...over(window0, window1));
      const iocCpu = iocSampler?.stop() ?? [];
      if (iocCpu.length === 0) iocCpu.push(...over(iocWindow0, o.iocMeter?.read()));
      sampler.updateMemory();
      result.peakRssMb = sampler.peakRssKb / 1024;
      const s = stat(cpu);
      if (s) result.cpuPercent = { ...s, samples: cpu.map((x) => Math.round(x * 100) / 100) };
      result.iocCpuPercent = stat(iocCpu);
      progress('checking');
      const samples = await shipSamples(runner);
      o.onSamples?.(samples);
      if (task === 'array') {
        const elements = o.array?.elements ?? Number(complete.elements ?? 0);
        result.array = checkArraySamples(samples, {
          elements,
          lastLength: Number(complete.elements ?? elements),
          ...(o.array?.type && { type: o.array.type }),
        });
        const server = serverRate(stats0, stats1, elements);
        if (server)
          result.array.server = {
            ...server,
            fraction: server.updatesPerSecond > 0 ? result.array.updatesPerSecond / server.updatesPerSecond : 0,
          };
        result.ok = result.array.ok;
        if (!result.ok) {
          result.error =
            `array check failed: ${result.array.corrupt} corrupt, ${result.array.valueErrors} went backwards` +
            (result.array.corruptUpdates ? `: ${result.array.corruptUpdates.slice(0, 2).join('; ')}` : '');
        }
        return;
      }
      result.check = checkMonitorSamples(samples, {
        pvs: o.names.length,
        samplesPerPv: o.samples,
        startedAt,
        periodS: 1 / Math.max(o.rate, 0.1),
        expectedSeverity: 1,
        names: o.names,
      });
      result.ok = result.check.ok;
      if (!result.ok) result.error = `sample check failed: ${result.check.findings.slice(0, 2).join('; ')}`;
    });
  } finally {
    if (overMemory) result.peakRssMb = Math.max(result.peakRssMb ?? 0, overMemory);
    clearInterval(guard);
    if (warm) clearTimeout(warm);
    sampler?.stop();
    iocSampler?.stop();
  }
}

/** The IOC's published array rate between two of its stats answers (undefined without both). */
export function serverRate(
  a: IocStats | undefined,
  b: IocStats | undefined,
  elements: number,
): { updatesPerSecond: number; mElementsPerSecond: number } | undefined {
  if (!a || !b || !(b.arrayTime > a.arrayTime)) return undefined;
  const updatesPerSecond = (b.arrayUpdates - a.arrayUpdates) / (b.arrayTime - a.arrayTime);
  return { updatesPerSecond, mElementsPerSecond: (updatesPerSecond * elements) / 1e6 };
}
