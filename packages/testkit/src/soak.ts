// The reconnection soak: monitors over CA and PVA on the built-in IOC while it is, cycle after
// cycle, stopped and started again (a snapshot taken during the outage) and frozen (SIGSTOP) past
// the echo timeout and thawed; every monitor's events are checked for order, and this process's
// heap, RSS (after GC when gc is given) and open descriptors are sampled after each cycle.
import { readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Context, type Monitor } from 'epics-client';
import { startIoc, type Ioc, type IocOptions } from 'epicsperf/dist/ioc/index.js';
import { median, MonitorTracker, slope } from './soak-track.js';

export interface SoakOptions {
  /** Cycles, each one restart and one freeze (default 100). */
  cycles?: number;
  /** Counters monitored, each over CA and over PVA (default 100). */
  records?: number;
  /** Counter update rate of the IOC, Hz (default 10). */
  rate?: number;
  /** EPICS_CA_CONN_TMO and EPICS_PVA_CONN_TMO of the client, seconds (default 1). */
  connTimeout?: number;
  /** Cycles left out of the growth fit (default 5, at most half the cycles). */
  warmup?: number;
  /** Timeout of the outage snapshot, ms (default 500). */
  snapshotTimeout?: number;
  /** Longest wait for all monitors to go down or come back, ms (default 20 s). */
  phaseTimeout?: number;
  /** Full garbage collection before each memory sample (global.gc under --expose-gc). */
  gc?: () => void;
  /** Told after each cycle. */
  onCycle?: (c: SoakCycle, index: number) => void;
}

/**
 * One outage's figures: ms until every monitor was down; from the server's return (startIoc
 * resolved, after its own probe's read, or the thaw) until each monitor's first update (0 for one
 * back before), the median and the slowest, and the slowest per protocol.
 */
export interface SoakOutage {
  downMs: number;
  resumeMedianMs: number;
  resumeMaxMs: number;
  resumeMaxMsCa: number;
  resumeMaxMsPva: number;
}

export interface SoakCycle {
  restart: SoakOutage & { snapshotMs: number; snapshotFailed: number; snapshotNames: number };
  freeze: SoakOutage & { frozenMs: number };
  heapUsed: number;
  /** Of heapUsed, the compiled code's space (the JIT's share of the growth shows here, partly). */
  codeSpace: number;
  rss: number;
  fds: number;
  /** Open circuits after the cycle: CA, PVA. */
  circuits: [number, number];
}

export interface SoakResult {
  cyclesAsked: number;
  cycles: SoakCycle[];
  monitors: { ca: number; pva: number };
  connTimeoutS: number;
  /** The first reason the soak stopped early, if it did. */
  aborted?: string;
  /** Events out of order (or error events), the first 100 of them. */
  violations: string[];
  violationCount: number;
  errorEvents: number;
  /** Exceptions that escaped: thrown by an API call, uncaught, unhandled rejections. */
  thrown: string[];
  /** Snapshot results during outages that were not failures (should be none). */
  snapshotSuccesses: number;
  updates: number;
  gc: boolean;
  warmup: number;
  /** Growth per cycle, bytes, a linear fit over the cycles after the warm-up. */
  heapGrowthPerCycle: number;
  codeSpaceGrowthPerCycle: number;
  rssGrowthPerCycle: number;
  fds: { first: number; afterWarmup: number; last: number; max: number };
  restart: { resumeMedianMs: number; resumeMaxMs: number; snapshotMedianMs: number; snapshotMaxMs: number };
  freeze: { downMedianMs: number; resumeMedianMs: number; resumeMaxMs: number };
  durationS: number;
}

class PhaseTimeout extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(pred: () => boolean, ms: number, what: () => string): Promise<void> {
  const t0 = performance.now();
  while (!pred()) {
    if (performance.now() - t0 > ms) throw new PhaseTimeout(`timed out after ${ms} ms waiting for ${what()}`);
    await sleep(10);
  }
}

/**
 * While the IOC is frozen, SIGINT or SIGTERM thaws it before this process dies of the signal: a
 * stopped IOC would keep its death signal (and its parent's stdin EOF) pending forever. Returns the undo.
 */
function thawOnSignal(pid: number): () => void {
  const onSignal = (sig: NodeJS.Signals) => {
    undo();
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone already
    }
    process.kill(process.pid, sig);
  };
  const undo = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return undo;
}

/** Open file descriptors of this process. */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

export async function runSoak(o: SoakOptions = {}): Promise<SoakResult> {
  const cyclesAsked = o.cycles ?? 100;
  const records = o.records ?? 100;
  const connTimeout = o.connTimeout ?? 1;
  const phaseTimeout = o.phaseTimeout ?? 20_000;
  const snapshotTimeout = o.snapshotTimeout ?? 500;
  const warmup = Math.min(o.warmup ?? 5, Math.floor(cyclesAsked / 2));
  const started = performance.now();
  const thrown: string[] = [];
  const onUncaught = (err: unknown) => void thrown.push(`uncaught: ${String((err as Error)?.stack ?? err)}`);
  const onRejection = (err: unknown) => void thrown.push(`unhandled rejection: ${String((err as Error)?.stack ?? err)}`);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);

  const iocOptions: IocOptions = { records, rate: o.rate ?? 10, arrayElements: 0 };
  let ioc: Ioc | undefined = await startIoc(iocOptions);
  const { caPort, pvaPort } = ioc;
  const ctx = new Context({ env: ioc.env, connTimeout, pvaConnTimeout: connTimeout });
  const tracker = new MonitorTracker();
  const names = ioc.counterNames();
  const monitors: Monitor<unknown>[] = [];
  for (const n of names) monitors.push(ctx.monitor(n, {}, tracker.watch(n)) as Monitor<unknown>);
  for (const n of names) monitors.push(ctx.monitor(`pva://${n}`, {}, tracker.watch(`pva://${n}`)) as Monitor<unknown>);
  const outageNames = [...names, ...names.map((n) => `pva://${n}`), `${ioc.prefix}SOAK:MISSING`, `pva://${ioc.prefix}SOAK:MISSING`];

  const cycles: SoakCycle[] = [];
  let aborted: string | undefined;
  let snapshotSuccesses = 0;
  /** Set while the IOC is frozen: thaws it on a signal; undone at the thaw. */
  let thawing: (() => void) | undefined;
  const progress = (what: string) => () => {
    const p = tracker.progress();
    return `${what} (${p.down} down, ${p.back} back of ${p.of}; not back: ${tracker.stragglers().join(', ')})`;
  };
  const last = (xs: number[]) => xs[xs.length - 1] ?? 0;
  const resumed = (t0: number) => {
    const all = tracker.backTimes(t0);
    return {
      resumeMedianMs: median(all),
      resumeMaxMs: last(all),
      resumeMaxMsCa: last(tracker.backTimes(t0, (n) => !n.startsWith('pva://'))),
      resumeMaxMsPva: last(tracker.backTimes(t0, (n) => n.startsWith('pva://'))),
    };
  };
  const guard = async <T>(what: string, f: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await f();
    } catch (err) {
      thrown.push(`${what} threw: ${String((err as Error)?.stack ?? err)}`);
      return undefined;
    }
  };

  try {
    await until(() => tracker.allUp(), phaseTimeout, progress('the first updates'));
    for (let c = 0; c < cyclesAsked; c++) {
      // (a) Stopped, a snapshot during the outage, started again on the same ports.
      tracker.beginPhase();
      let t0 = performance.now();
      await ioc!.stop();
      ioc = undefined;
      await until(() => tracker.allDown(), phaseTimeout, progress('every monitor to disconnect after the stop'));
      const downMs = performance.now() - t0;
      t0 = performance.now();
      const snap = await guard('snapshot', () => ctx.snapshot(outageNames, { timeout: snapshotTimeout }));
      const snapshotMs = performance.now() - t0;
      const failed = snap ? snap.filter((r) => !r.ok).length : 0;
      snapshotSuccesses += snap ? snap.length - failed : 0;
      ioc = await startIoc({ ...iocOptions, caPort, pvaPort });
      t0 = performance.now();
      await until(() => tracker.allBack(), phaseTimeout, progress('every monitor back after the restart'));
      const restart = {
        downMs,
        ...resumed(t0),
        snapshotMs,
        snapshotFailed: failed,
        snapshotNames: outageNames.length,
      };

      // (b) Frozen until every circuit is declared unresponsive, then thawed.
      tracker.beginPhase();
      t0 = performance.now();
      thawing = thawOnSignal(ioc.pid);
      process.kill(ioc.pid, 'SIGSTOP');
      await until(() => tracker.allDown(), phaseTimeout, progress('every monitor to disconnect while frozen'));
      const frozenMs = performance.now() - t0;
      process.kill(ioc.pid, 'SIGCONT');
      thawing();
      thawing = undefined;
      t0 = performance.now();
      await until(() => tracker.allBack(), phaseTimeout, progress('every monitor back after the thaw'));
      const freeze = { downMs: frozenMs, frozenMs, ...resumed(t0) };

      o.gc?.();
      o.gc?.();
      const mem = process.memoryUsage();
      const s = ctx.stats();
      const code = getHeapSpaceStatistics().find((x) => x.space_name === 'code_space')?.space_used_size ?? 0;
      const cycle: SoakCycle = {
        restart,
        freeze,
        heapUsed: mem.heapUsed,
        codeSpace: code,
        rss: mem.rss,
        fds: openFds(),
        circuits: [s.circuits, s.pva?.circuits ?? 0],
      };
      cycles.push(cycle);
      o.onCycle?.(cycle, c);
      if (thrown.length > 0) {
        aborted = 'an exception escaped';
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof PhaseTimeout)) thrown.push(`soak: ${String((err as Error)?.stack ?? err)}`);
    aborted = (err as Error)?.message ?? String(err);
  } finally {
    if (thawing && ioc) process.kill(ioc.pid, 'SIGCONT');
    thawing?.();
    for (const m of monitors) m.close();
    await ctx.close();
    await ioc?.stop();
    // Late reports of what was closed still count.
    await sleep(50);
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onRejection);
  }

  const fit = cycles.slice(warmup);
  const xs = fit.map((_, i) => i);
  const sorted = (f: (c: SoakCycle) => number) => cycles.map(f).sort((a, b) => a - b);
  const rs = sorted((c) => c.restart.resumeMaxMs);
  const ss = sorted((c) => c.restart.snapshotMs);
  const fs = sorted((c) => c.freeze.resumeMaxMs);
  const fds = cycles.map((c) => c.fds);
  const result: SoakResult = {
    cyclesAsked,
    cycles,
    monitors: { ca: names.length, pva: names.length },
    connTimeoutS: connTimeout,
    violations: tracker.violations,
    violationCount: tracker.violationCount,
    errorEvents: tracker.errors,
    thrown,
    snapshotSuccesses,
    updates: tracker.updates,
    gc: o.gc !== undefined,
    warmup,
    heapGrowthPerCycle: slope(
      xs,
      fit.map((c) => c.heapUsed),
    ),
    codeSpaceGrowthPerCycle: slope(
      xs,
      fit.map((c) => c.codeSpace),
    ),
    rssGrowthPerCycle: slope(
      xs,
      fit.map((c) => c.rss),
    ),
    fds: {
      first: fds[0] ?? 0,
      afterWarmup: fds[Math.min(warmup, fds.length - 1)] ?? 0,
      last: fds[fds.length - 1] ?? 0,
      max: Math.max(0, ...fds),
    },
    restart: {
      resumeMedianMs: median(sorted((c) => c.restart.resumeMedianMs)),
      resumeMaxMs: rs[rs.length - 1] ?? 0,
      snapshotMedianMs: median(ss),
      snapshotMaxMs: ss[ss.length - 1] ?? 0,
    },
    freeze: {
      downMedianMs: median(sorted((c) => c.freeze.downMs)),
      resumeMedianMs: median(sorted((c) => c.freeze.resumeMedianMs)),
      resumeMaxMs: fs[fs.length - 1] ?? 0,
    },
    durationS: (performance.now() - started) / 1000,
  };
  if (aborted !== undefined) result.aborted = aborted;
  return result;
}
