// Measures a process from outside through /proc: CPU time of all its threads (and, optionally,
// of its descendants), resident memory, and a once-a-second CPU sampler.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clkTckValue: number | undefined;

/** Clock ticks per second of /proc's CPU times: asked of getconf on first use (not at load), else 100. */
function clkTck(): number {
  if (clkTckValue === undefined) {
    try {
      clkTckValue = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTckValue = 100;
    }
  }
  return clkTckValue;
}

/** CPU seconds (user + system, all threads) used by a live process; undefined once it is gone. */
export function cpuSeconds(pid: number, withChildren = false): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const f = statFields(stat);
  // f[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  let ticks = Number(f[11]) + Number(f[12]);
  if (withChildren) {
    ticks += Number(f[13]) + Number(f[14]);
    for (const child of childPids(pid)) ticks += (cpuSeconds(child, true) ?? 0) * clkTck();
  }
  return ticks / clkTck();
}

/** The fields of a /proc stat line after the command name, which is in parentheses and may contain spaces. */
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

/**
 * CPU seconds (user + system) of each thread of a live process, by thread id, with the thread's
 * name (its comm: V8's and the JVM's threads are named); undefined once it is gone. A thread
 * that ends while it is read is left out.
 */
export function threadCpuSeconds(pid: number): Map<number, { name: string; seconds: number }> | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const out = new Map<number, { name: string; seconds: number }>();
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = statFields(stat);
    out.set(Number(tid), {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      seconds: (Number(f[11]) + Number(f[12])) / clkTck(),
    });
  }
  return out;
}

/** Children of a process (those forked by its main thread, which is where Node and Python spawn). */
export function childPids(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** The machine's CPU time and the part a hypervisor took for other guests ("steal"), in ticks. */
function machineTicks(): { total: number; steal: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    if (f.length < 8) return undefined;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is in user.
    return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), steal: f[7]! };
  } catch {
    return undefined;
  }
}

/**
 * Start measuring hypervisor steal; the returned function gives the percentage of the machine's
 * CPU time stolen since (undefined where /proc/stat has no steal column). On a shared virtual
 * machine it tells how loaded the host was while a figure was taken.
 */
export function stealMeter(): () => number | undefined {
  const start = machineTicks();
  return () => {
    const end = machineTicks();
    if (!start || !end || end.total <= start.total) return undefined;
    return (100 * (end.steal - start.steal)) / (end.total - start.total);
  };
}

/** Resident set size and its peak, in kB. */
export function memoryKb(pid: number): { rssKb: number; peakKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    return { rssKb: Number(rss?.[1] ?? 0), peakKb: Number(hwm?.[1] ?? 0) };
  } catch {
    return undefined;
  }
}

/**
 * One reading of a process, taken on the host it runs on: CPU seconds of the process (all its
 * threads) and of it with its descendants, when (ms on that host's monotonic clock), and its
 * resident memory and the kernel's high-water mark of it.
 */
export interface Reading {
  cpuS: number;
  treeCpuS: number;
  t: number;
  rssKb: number;
  peakKb: number;
}

/**
 * Reads a process from outside. Locally it reads /proc now; for a process on another host it
 * gives that host's latest reading (CPU rates come out right either way: both ends of a
 * difference carry the measuring host's own time).
 */
export interface Meter {
  read(): Reading | undefined;
}

/** The meter of a process on this host; undefined readings once it is gone. */
export function processMeter(pid: number): Meter {
  return {
    read: () => {
      const t = performance.now();
      const cpuS = cpuSeconds(pid);
      const treeCpuS = cpuSeconds(pid, true);
      const m = memoryKb(pid);
      if (cpuS === undefined || treeCpuS === undefined || !m) return undefined;
      return { cpuS, treeCpuS, t, ...m };
    },
  };
}

/** Samples CPU % of a process (100 = one core) once per period, and tracks its peak RSS. */
export class CpuSampler {
  readonly samples: number[] = [];
  peakRssKb = 0;
  private timer: NodeJS.Timeout | undefined;
  private last: { cpu: number; t: number } | undefined;
  private stopped = false;

  constructor(
    private readonly meter: Meter,
    private readonly opts: { periodMs?: number } = {},
  ) {}

  start(): void {
    this.take(false);
    this.timer = setInterval(() => this.take(true), this.opts.periodMs ?? 1000);
  }

  /** Stop; a final partial period counts if it is at least half a period long. */
  stop(): number[] {
    if (this.stopped) return this.samples;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const periodMs = this.opts.periodMs ?? 1000;
    const r = this.meter.read();
    if (this.last && r && r.t - this.last.t >= periodMs / 2) this.take(true, r);
    return this.samples;
  }

  /** Peak RSS seen so far (the kernel's high-water mark). */
  updateMemory(r = this.meter.read()): void {
    if (r) this.peakRssKb = Math.max(this.peakRssKb, r.peakKb, r.rssKb);
  }

  private take(record: boolean, r = this.meter.read()): void {
    this.updateMemory(r);
    if (!r) return;
    const cpu = r.cpuS;
    const t = r.t;
    if (record && this.last) {
      const dt = (t - this.last.t) / 1000;
      if (dt > 0) this.samples.push(((cpu - this.last.cpu) / dt) * 100);
    }
    this.last = { cpu, t };
  }
}
