// A capture with this project's CA client: every PV of a list monitored, every update appended
// to a CaptureWriter, flushed each period, gaps looked for, trouble reported while it runs.
import { statSync } from 'node:fs';
import { Context, type Monitor, type MonitorEvent, type CtrlReading, type TimeReading } from 'epics-client';
import { NATIVE_TYPE_NAMES } from 'epics-client/ca';
import type { PvMeta } from './writer.js';
import type { ThreadedWriter } from './worker.js';
import { GapDetector } from './gaps.js';
import { nowSeconds } from '../clock.js';
import type { NativeType } from './columns.js';
import type { CapturePvSummary, CaptureSummary } from '../results/capture.js';

export interface SessionOptions {
  names: readonly string[];
  flushMs: number;
  /** PVs whose values are checked for gaps (counters and the built-in IOC's array). */
  gapCheck: RegExp | undefined;
  /** How long each PV has to connect and answer the metadata read (ms). */
  connectTimeoutMs: number;
  /** Called with a one-line warning while the capture runs. */
  warn: (message: string) => void;
  /** Called after each flush. */
  onFlush?: (f: { updates: number; bytes: number; ms: number }) => void;
  /** Called when the capture stops on its own (a write error): the reason. */
  onFailure?: (reason: string) => void;
  env?: Record<string, string | undefined>;
}

interface Pv {
  name: string;
  index: number | undefined;
  type: NativeType | undefined;
  /** The CTRL read made before subscribing (units, precision, enum strings). */
  meta: CtrlReading | undefined;
  count: number;
  gaps: GapDetector | undefined;
  summary: CapturePvSummary;
  lostSeen: number;
}

const ROW_BYTES = 8 + 8 + 1 + 2;

export class CaptureSession {
  private readonly ctx: Context;
  private readonly pvs: Pv[];
  private monitors: Monitor[] = [];
  private timer: NodeJS.Timeout | undefined;
  private t0 = 0;
  private flushes = 0;
  private flushMsTotal = 0;
  private maxFlushMs = 0;
  private slowFlushes = 0;
  private failure: string | undefined;
  private stopped = false;

  private flushing: Promise<void> | undefined;

  constructor(
    private readonly writer: ThreadedWriter,
    private readonly o: SessionOptions,
  ) {
    this.ctx = new Context(o.env ? { env: o.env } : {});
    this.pvs = o.names.map((name) => ({
      name,
      index: undefined,
      type: undefined,
      meta: undefined,
      count: 0,
      lostSeen: 0,
      gaps: o.gapCheck?.test(name) ? new GapDetector() : undefined,
      summary: { name, updates: 0, bytes: 0, gaps: 0, lost: 0, overruns: 0, checked: o.gapCheck?.test(name) ?? false },
    }));
  }

  /**
   * Read each PV's metadata (units, precision, enum strings), then subscribe to all; resolves
   * when every PV that answered has its group in the file. Returns the names that did not.
   */
  async start(): Promise<string[]> {
    const reads = await this.ctx.snapshot(this.o.names, { form: 'ctrl', timeout: this.o.connectTimeoutMs });
    const missing: string[] = [];
    reads.forEach((r, i) => {
      const pv = this.pvs[i]!;
      if (!r.ok) {
        pv.summary.skipped = `not read: ${r.error.message}`;
        missing.push(pv.name);
        return;
      }
      const native = NATIVE_TYPE_NAMES[r.reading.dbrType % 7];
      if (native === undefined || native === 'string') {
        pv.summary.skipped = 'a string PV (not captured in format version 1)';
        return;
      }
      pv.type = native;
      pv.meta = r.reading;
    });
    this.t0 = performance.now();
    const added: Promise<void>[] = [];
    for (const pv of this.pvs) {
      if (!pv.type) continue;
      added.push(
        new Promise<void>((resolve) => {
          let nativeCount = 1;
          const onEvent = (e: MonitorEvent<TimeReading>): void => {
            if (e.kind === 'connected') nativeCount = e.nativeCount;
            else if (e.kind === 'update') {
              if (pv.index === undefined) {
                this.add(pv, nativeCount, e);
                resolve();
              }
              this.update(pv, e);
            } else if (e.kind === 'error') {
              this.o.warn(`${pv.name}: ${e.error.message}`);
              resolve();
            }
          };
          // an update's array is copied into the writer's buffer before the callback returns, so the
          // client may read the next update into the same memory
          this.monitors.push(this.ctx.monitor(pv.name, { form: 'time', reuseArrays: true }, onEvent));
        }),
      );
    }
    await Promise.all(added);
    this.timer = setInterval(() => {
      // a flush still running when the next is due: its time is reported when it ends
      this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
    }, this.o.flushMs);
    return missing;
  }

  /** Create the PV's group: scalar, fixed (the first update is the channel's full length) or varying. */
  private add(pv: Pv, nativeCount: number, first: TimeReading): void {
    const length = typeof first.value === 'number' ? 1 : first.value.length;
    const m = pv.meta?.metadata;
    const meta: PvMeta = {
      nativeType: pv.type!,
      count: Math.max(1, nativeCount),
      ...(nativeCount > 1 && length !== nativeCount && { varying: true }),
      ...(m?.units !== undefined && { units: m.units }),
      ...(m?.precision !== undefined && { precision: m.precision }),
      ...(m?.enumStrings !== undefined && { enumStrings: m.enumStrings }),
    };
    pv.count = meta.varying ? 0 : meta.count;
    pv.index = this.writer.addPv(pv.name, meta);
  }

  private update(pv: Pv, e: TimeReading): void {
    if (this.stopped || pv.index === undefined) return;
    let value = e.value as number | ArrayLike<number>;
    if (pv.count > 1 && typeof value !== 'number' && value.length !== pv.count) {
      // the array's length changed under a fixed layout: pad with zeros or cut, as CA does for a fixed count
      const fixed = new Float64Array(pv.count);
      fixed.set(Array.from(value).slice(0, pv.count));
      value = fixed;
    }
    const row = this.writer.append(pv.index, {
      value,
      timestamp: e.posixSeconds,
      received: nowSeconds(),
      severity: e.severity,
      status: e.status,
    });
    const s = pv.summary;
    s.updates++;
    s.bytes += ROW_BYTES + (typeof value === 'number' ? 1 : value.length) * bytesOf(pv.type!) + (pv.count === 0 ? 12 : 0);
    if (pv.gaps) {
      const gap = pv.gaps.observe(row, value);
      if (gap) {
        this.writer.appendGap(pv.index, gap);
        s.gaps++;
        if (gap.lost > 0) s.lost += gap.lost;
      }
    }
  }

  /** Write the buffered blocks and flush; a write error stops the capture (what was flushed stays). */
  async flush(): Promise<void> {
    if (this.failure) return;
    try {
      const f = await this.writer.flush();
      this.flushes++;
      this.flushMsTotal += f.ms;
      this.maxFlushMs = Math.max(this.maxFlushMs, f.ms);
      if (f.ms > this.o.flushMs) {
        this.slowFlushes++;
        this.o.warn(`cannot keep up: a flush took ${Math.round(f.ms)} ms, longer than the flush period of ${this.o.flushMs} ms`);
      }
      this.o.onFlush?.(f);
    } catch (err) {
      this.fail(`write failed: ${(err as Error).message.split('\n')[0]}`);
      return;
    }
    const lost = this.pvs.filter((p) => p.summary.lost > p.lostSeen);
    if (lost.length) {
      const n = lost.reduce((a, p) => a + p.summary.lost - p.lostSeen, 0);
      const where = lost
        .slice(0, 3)
        .map((p) => `${p.name} ${p.summary.lost - p.lostSeen}`)
        .join(', ');
      this.o.warn(
        `cannot keep up: ${n} updates lost since the last flush (${where}${lost.length > 3 ? `, and ${lost.length - 3} more PVs` : ''})`,
      );
      for (const p of lost) p.lostSeen = p.summary.lost;
    }
  }

  private fail(reason: string): void {
    this.failure = reason;
    this.stopMonitors();
    this.o.onFailure?.(reason);
  }

  private stopMonitors(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const m of this.monitors) m.close();
    this.monitors = [];
  }

  /** Unsubscribe, write what is buffered, flush and close the file; the summary. */
  async stop(client: string, version: string): Promise<CaptureSummary> {
    const seconds = this.t0 ? (performance.now() - this.t0) / 1000 : 0;
    this.stopMonitors();
    await this.flushing;
    try {
      await this.writer.close();
    } catch (err) {
      this.failure ??= `closing the file failed: ${(err as Error).message.split('\n')[0]}`;
    }
    await this.ctx.close();
    let fileBytes = 0;
    try {
      fileBytes = statSync(this.writer.path).size;
    } catch {
      // reported through the failure, if any
    }
    const pvs = this.pvs.map((p) => p.summary);
    return {
      client,
      version,
      file: this.writer.path,
      pvs,
      updates: pvs.reduce((a, p) => a + p.updates, 0),
      bytes: pvs.reduce((a, p) => a + p.bytes, 0),
      fileBytes,
      seconds,
      flushes: this.flushes,
      maxFlushMs: this.maxFlushMs,
      meanFlushMs: this.flushes ? this.flushMsTotal / this.flushes : 0,
      slowFlushes: this.slowFlushes,
      ...(this.failure !== undefined && { error: this.failure }),
    };
  }
}

function bytesOf(t: NativeType): number {
  return t === 'char' ? 1 : t === 'short' || t === 'enum' ? 2 : t === 'long' || t === 'float' ? 4 : 8;
}
