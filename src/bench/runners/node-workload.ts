// The workloads as this project's Node client runs them (snapshot, monitor, array), over CA or
// (--pva) PV Access, independent of whether they run on the main thread or inside a worker thread.
import { ALARM_STATUS_NAMES } from '../../ca/constants.js';
import { Context } from '../../client/context.js';
import { PvaReading } from '../../client/pva/reading.js';
import type { TimeReading } from '../../client/reading.js';
import type { MonitorEvent } from '../../client/monitor.js';
import type { Monitor } from '../../client/monitor.js';
import type { RunnerArgs } from './protocol.js';
import { nowSeconds } from './protocol.js';
import { SampleStore } from '../samples.js';

export interface Shipment {
  event: Record<string, unknown>;
  payload: Uint8Array;
}

/** The CA alarm status of a reading: QSRV sends the CA status name as the PVA alarm message. */
function statusOf(r: { status: number }): number {
  if (r instanceof PvaReading) {
    const i = ALARM_STATUS_NAMES.indexOf(r.message as (typeof ALARM_STATUS_NAMES)[number]);
    return i >= 0 ? i : r.status;
  }
  return r.status;
}

export class NodeWorkload {
  private readonly ctx: Context<'ca' | 'pva'>;
  /** PV Access: the fields the monitors ask for. */
  private readonly request: string | undefined;
  private monitors: Monitor<TimeReading | PvaReading>[] = [];
  private store: SampleStore | undefined;
  private snapshotJson: Uint8Array | undefined;

  constructor(
    private readonly args: RunnerArgs,
    private readonly events: (event: Record<string, unknown>) => void,
  ) {
    const pva = args.flags.pva === true;
    this.ctx = new Context({ protocol: pva ? 'pva' : 'ca' });
    this.request = pva ? 'field(value,alarm,timeStamp)' : undefined;
  }

  start(): void {
    if (this.args.workload === 'snapshot') void this.snapshot();
    else if (this.args.workload === 'array') this.array();
    else this.monitor();
  }

  private async snapshot(): Promise<void> {
    const results = await this.ctx.snapshot(this.args.names, { timeout: this.args.timeoutMs });
    this.events({ ev: 'done' });
    const out = results.map((r) =>
      r.ok
        ? {
            ok: true,
            value: typeof r.value === 'number' || typeof r.value === 'string' ? r.value
              : typeof r.value === 'bigint' ? Number(r.value) : Array.from(r.value as ArrayLike<number>),
            severity: r.severity,
            status: statusOf(r.reading),
            timestamp: r.reading.posixSeconds,
            elapsedMs: r.elapsedMs,
          }
        : { ok: false, error: r.error.message, code: r.code, elapsedMs: r.elapsedMs },
    );
    this.snapshotJson = new TextEncoder().encode(JSON.stringify(out)); // its own ArrayBuffer: transferable
  }

  private monitor(): void {
    const names = this.args.names;
    const store = (this.store = new SampleStore(names.length, this.args.samples));
    let firstSeen = 0;
    const seen = new Uint8Array(names.length);
    let complete = false;
    names.forEach((name, i) => {
      const onEvent = (e: MonitorEvent<TimeReading | PvaReading>): void => {
        if (e.kind !== 'update') return;
        const recv = nowSeconds();
        if (seen[i] === 0) {
          seen[i] = 1;
          if (++firstSeen === names.length) this.events({ ev: 'connected', count: names.length });
        }
        if (store.add(i, e.severity, statusOf(e), Number(e.value), e.posixSeconds, recv) && !complete) {
          complete = true;
          this.events({ ev: 'complete' });
        }
      };
      this.monitors.push(this.ctx.monitor(name, { type: 'double', ...(this.request ? { request: this.request } : {}) }, onEvent));
    });
  }

  /** One big waveform: keep first element, probe consistency, times; the arrays are pooled. */
  private array(): void {
    const store = (this.store = new SampleStore(1, this.args.samples));
    let n = 0;
    let elements = 0;
    const onEvent = (e: MonitorEvent<TimeReading | PvaReading>): void => {
      if (e.kind !== 'update') return;
      const recv = nowSeconds();
      const a = e.value as Float64Array;
      elements = a.length;
      const first = a[0]!;
      const bad = (a[a.length >> 1] !== first ? 1 : 0) + (a[a.length - 1] !== first ? 1 : 0);
      if (n++ === 0) this.events({ ev: 'connected', count: 1 });
      if (store.add(0, e.severity, bad, first, e.posixSeconds, recv) && n === this.args.samples) {
        this.events({ ev: 'complete', elements });
      }
    };
    const opts = this.request ? { request: this.request } : { type: 'double' as const, reuseArrays: true };
    this.monitors.push(this.ctx.monitor(this.args.names[0]!, opts, onEvent));
  }

  ship(): Shipment {
    if (this.args.workload === 'snapshot') {
      return { event: { ev: 'results' }, payload: this.snapshotJson ?? new Uint8Array(0) };
    }
    for (const m of this.monitors) m.close();
    const store = this.store!;
    return { event: { ev: 'samples', count: store.count }, payload: store.bytes() };
  }

  async close(): Promise<void> {
    await this.ctx.close();
  }
}
