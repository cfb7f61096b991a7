// The tasks as this project's Node client runs them (snapshot, monitor, array), over CA or
// (--pva) PV Access, independent of whether they run on the main thread or inside a worker thread.
import { Context, type PvaReading, type SnapshotResult, type TimeReading, type MonitorEvent, type Monitor } from 'epics-client';
import { shippedRows, statusOf } from 'epics-ops';
import type { RunnerArgs } from './args.js';
import { nowSeconds } from '../clock.js';
import { SampleStore } from '../bench/samples.js';
import { arrayPut, latency } from './node-put.js';

export interface Shipment {
  event: Record<string, unknown>;
  payload: Uint8Array;
}

export class NodeTask {
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
    if (this.args.task === 'snapshot') void this.snapshot();
    else if (this.args.task === 'array') this.array();
    else if (this.args.task === 'array-put') void this.put(arrayPut(this.ctx, this.args, this.events).then((store) => ({ store })));
    else if (this.args.task === 'latency') void this.put(latency(this.ctx, this.args, this.events));
    else this.monitor();
  }

  /** A put-driven task: keep its samples (and monitor); a failure ends the runner with its reason. */
  private async put(run: Promise<{ store: SampleStore; monitor?: Monitor<TimeReading | PvaReading> }>): Promise<void> {
    try {
      const r = await run;
      this.store = r.store;
      if (r.monitor) this.monitors.push(r.monitor);
    } catch (err) {
      this.events({ ev: 'error', message: `${this.args.task}: ${(err as Error).message}` });
    }
  }

  private async snapshot(): Promise<void> {
    const results = await this.ctx.snapshot(this.args.names, { timeout: this.args.timeoutMs });
    this.events({ ev: 'done' });
    const out = shippedRows(results as SnapshotResult<TimeReading | PvaReading>[]);
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

  /** One big waveform in its native type: keep the first element, the checks' bits (ARRAY_BAD of
   *  ../checks.ts), times; the arrays are pooled. With --check-all every element is compared. */
  private array(): void {
    const store = (this.store = new SampleStore(1, this.args.samples));
    const checkAll = this.args.flags['check-all'] === true;
    let n = 0;
    let elements = -1;
    const onEvent = (e: MonitorEvent<TimeReading | PvaReading>): void => {
      // A subscription the client refuses (an array past EPICS_CA_MAX_ARRAY_BYTES) ends the run with why.
      if (e.kind === 'error') this.events({ ev: 'error', message: `${e.name}: ${e.error.message}` });
      if (e.kind !== 'update') return;
      const recv = nowSeconds();
      const v = e.value;
      const a = (typeof v === 'number' ? [v] : v) as ArrayLike<number>;
      const len = a.length;
      if (elements < 0) elements = len;
      const first = len > 0 ? a[0]! : NaN;
      let bad = (a[len >> 1] !== first ? 1 : 0) | (a[len - 1] !== first ? 2 : 0) | (len !== elements ? 4 : 0);
      if (checkAll) {
        for (let i = 0; i < len; i++) {
          if (a[i] !== first) {
            bad |= 8;
            break;
          }
        }
      }
      if (n++ === 0) this.events({ ev: 'connected', count: 1 });
      // (An int64 waveform over PV Access is a BigInt64Array: its elements compare as bigints, and are kept as numbers.)
      if (store.add(0, e.severity, bad, Number(first), e.posixSeconds, recv) && n === this.args.samples) {
        this.events({ ev: 'complete', elements: len });
      }
    };
    const opts = this.request ? { request: this.request, reuseArrays: true } : { reuseArrays: true };
    this.monitors.push(this.ctx.monitor(this.args.names[0]!, opts, onEvent));
  }

  ship(): Shipment {
    if (this.args.task === 'snapshot') {
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
