// The array-put workload for one client: its runner puts arrays to PREFIX:ARRAY:PUT as fast as it
// can (each waiting for completion, or not), measured from outside; the IOC checks every put.
import { CpuSampler, type Meter } from '../procstat.js';
import type { ClientSpec } from '../clients/index.js';
import { runSession, shipSamples } from './session.js';
import { stat, type ArrayPutRun, type ArrayPutWorkload } from '../results/index.js';
import type { IocStats } from '../ioc/stats.js';
import type { Host } from '../hosts/host.js';

export interface ArrayPutRunOptions {
  client: ClientSpec;
  python: string;
  /** Where the runner runs (default: here). */
  host?: Host;
  env: Record<string, string>;
  /** PREFIX:ARRAY:PUT of an IOC started with this workload's elements and type. */
  name: string;
  workload: ArrayPutWorkload;
  callback: boolean;
  ioc: { meter: Meter; stats(): Promise<IocStats>; resetPuts(): Promise<IocStats> };
  /** The client's deadline for the whole run (ms): past it the runner is stopped (ClientDeadline). */
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
}

export async function runArrayPut(o: ArrayPutRunOptions): Promise<ArrayPutRun> {
  const w = o.workload;
  const result: ArrayPutRun = { client: o.client.name, callback: o.callback, ok: false, puts: 0, failedPuts: 0 };
  return runSession(
    {
      ...o,
      task: 'array-put',
      names: [o.name],
      args: ['--samples', String(w.samples), '--elements', String(w.elements), '--type', w.type, ...(o.callback ? [] : ['--no-callback'])],
      beforeStart: () => o.ioc.resetPuts(),
    },
    result,
    async ({ runner, progress }) => {
      const sampler = new CpuSampler(runner.meter);
      const iocSampler = new CpuSampler(o.ioc.meter);
      try {
        sampler.start();
        iocSampler.start();
        progress('putting');
        // A generous deadline: 10 MB/s would be very slow even for Python.
        const deadline = 60_000 + (w.samples * w.elements * 8) / 10_000;
        await runner.next('complete', deadline, `${w.samples} puts`);
        const cpu = sampler.stop();
        sampler.updateMemory();
        result.peakRssMb = sampler.peakRssKb / 1024;
        const s = stat(cpu);
        if (s) result.cpuPercent = { ...s, samples: cpu.map((x) => Math.round(x * 100) / 100) };
        const samples = await shipSamples(runner);
        result.puts = samples.length;
        result.failedPuts = samples.filter((x) => x.status !== 0).length;
        if (samples.length > 0) {
          const span = samples[samples.length - 1]!.recvTime - samples[0]!.iocTime;
          if (span > 0) {
            result.putsPerSecond = samples.length / span;
            result.mElementsPerSecond = (result.putsPerSecond * w.elements) / 1e6;
          }
        }
        // Puts sent without completion may still be on their way (or queued in the IOC's check).
        progress('waiting for the IOC');
        const got = await drained(o.ioc.stats, result.puts - result.failedPuts);
        result.iocCpuPercent = stat(iocSampler.stop());
        const iocSpan = got.putLastTime - got.putFirstTime;
        const iocRate = got.puts > 1 && iocSpan > 0 ? (got.puts - 1) / iocSpan : 0;
        result.ioc = {
          received: got.puts,
          elements: got.putElements,
          bad: got.putBad,
          findings: got.putFindings,
          putsPerSecond: iocRate,
          mElementsPerSecond: (iocRate * w.elements) / 1e6,
        };
        const problems: string[] = [];
        if (result.failedPuts) problems.push(`${result.failedPuts} puts failed in the client`);
        if (got.putBad) problems.push(`the IOC found ${got.putBad} bad: ${got.putFindings.slice(0, 2).join('; ')}`);
        if (got.puts < result.puts - result.failedPuts) problems.push(`the IOC received ${got.puts} of ${result.puts - result.failedPuts}`);
        result.ok = problems.length === 0 && result.puts === w.samples;
        if (problems.length) result.error = problems.join('; ');
      } finally {
        sampler.stop();
        iocSampler.stop();
      }
    },
  );
}

/** The IOC's counts once it has checked `expected` puts, or once they stop growing for 3 s. */
async function drained(stats: () => Promise<IocStats>, expected: number): Promise<IocStats> {
  let last = await stats();
  let still = Date.now();
  const until = Date.now() + 60_000;
  while (last.puts < expected && Date.now() < until && Date.now() - still < 3000) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await stats();
    if (now.puts !== last.puts) still = Date.now();
    last = now;
  }
  return last;
}
