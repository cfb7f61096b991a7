// Snapshot: read many names concurrently, each against its own timeout, with one timer for the
// batch; one result per name in input order (value, alarm, timestamp, elapsed, or why it failed).
// Lean per name: one small object that waits for the connection and takes the reply.
import { performance } from 'node:perf_hooks';
import { decodeDbrParts, Reading, type DbrMetadata } from '../ca/dbr.js';
import type { ClientCircuit, FailReason, IoHandler } from '../ca/circuit.js';
import type { Header } from '../ca/header.js';
import type { Channel, ConnectWaiter } from './channel.js';
import type { Context } from './context.js';
import { planRead, type ReadOptions, type ReadPlan } from './convert.js';
import { AbortedError, AccessDeniedError, CaError, ProtocolError, TimeoutError } from './errors.js';
import { checkTimeout } from './pending.js';

export interface SnapshotOptions extends ReadOptions {
  /** Milliseconds each name has to answer (default 5000). */
  timeout?: number;
  /** Abort: every name still pending fails with an aborted error. */
  signal?: AbortSignal;
}

export interface SnapshotSuccess {
  readonly name: string;
  readonly ok: true;
  readonly value: Reading['value'];
  readonly severity: number;
  readonly status: number;
  /** The PV's timestamp (TIME form; the EPICS epoch when the form has none). */
  readonly timestamp: Date;
  readonly secondsPastEpoch: number;
  readonly nanoseconds: number;
  /** Milliseconds from the start of the snapshot to this answer. */
  readonly elapsedMs: number;
  readonly reading: Reading;
}

export interface SnapshotFailure {
  name: string;
  ok: false;
  error: CaError;
  code: CaError['code'];
  elapsedMs: number;
}

export type SnapshotResult = SnapshotSuccess | SnapshotFailure;

/** A success: a Reading that also carries the name and the elapsed time (one object per answer). */
class Answer extends Reading implements SnapshotSuccess {
  readonly ok = true as const;
  constructor(
    readonly name: string,
    readonly elapsedMs: number,
    value: Reading['value'], dbrType: number, count: number, status: number, severity: number,
    secondsPastEpoch: number, nanoseconds: number, metadata: DbrMetadata | undefined,
  ) {
    super(value, dbrType, count, status, severity, secondsPastEpoch, nanoseconds, metadata);
  }

  get reading(): Reading {
    return this;
  }

  toJSON(): object {
    return {
      name: this.name, ok: true, value: this.value, severity: this.severity, status: this.status,
      timestamp: this.timestamp, secondsPastEpoch: this.secondsPastEpoch, nanoseconds: this.nanoseconds, elapsedMs: this.elapsedMs,
    };
  }
}

/** One name of the batch: waits for its channel, then for its read. */
class Item implements ConnectWaiter, IoHandler {
  ioid = 0;
  waiting = false;
  circuit: ClientCircuit | undefined;
  plan: ReadPlan | undefined;
  constructor(readonly batch: Batch, readonly i: number, readonly ch: Channel) {}

  channelConnected(): void {
    this.waiting = false;
    this.batch.read(this);
  }

  onReply(h: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void {
    this.ioid = 0;
    this.batch.reply(this, h, payload, owned, hostOrder);
  }

  onFail(reason: FailReason): void {
    this.ioid = 0;
    this.batch.fail(this.i, this.batch.ctx.failError(reason, this.ch.name));
  }
}

/** Names set up per event-loop turn when a snapshot starts. */
const START_SLICE = 256;

class Batch {
  readonly results: Array<SnapshotResult | undefined>;
  readonly items: Array<Item | undefined>;
  remaining: number;
  readonly t0 = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** Names acquired so far (they are set up a slice per event-loop turn). */
  private started = 0;
  /** Whether this batch holds the searcher to full datagrams while it sets names up. */
  private corked = false;
  private onAbort: (() => void) | undefined;
  private resolve!: (r: SnapshotResult[]) => void;
  readonly promise: Promise<SnapshotResult[]>;
  // The last read plan, reused while channels have the same native type and count.
  private planType = -1;
  private planCount = -1;
  private planVersion = -1;
  private lastPlan: ReadPlan | undefined;

  constructor(readonly ctx: Context, readonly names: readonly string[], readonly opts: SnapshotOptions) {
    const n = names.length;
    this.results = new Array(n);
    this.items = new Array(n);
    this.remaining = n;
    this.promise = new Promise((res) => (this.resolve = res));
  }

  start(timeout: number): void {
    const { ctx, names } = this;
    const n = names.length;
    // One timer for the batch, counted from the start (setting up 10,000 names takes time too).
    this.timer = setTimeout(() => {
      for (let i = 0; i < n && this.remaining > 0; i++) {
        if (this.results[i]) continue;
        const item = this.items[i];
        this.fail(i, item ? ctx.timeoutError(item.ch) : new TimeoutError('not started within the timeout', names[i]));
      }
    }, timeout);
    const signal = this.opts.signal;
    if (signal) {
      this.onAbort = () => {
        for (let i = 0; i < n && this.remaining > 0; i++) if (!this.results[i]) this.fail(i, new AbortedError(undefined, names[i]));
      };
      if (signal.aborted) return this.onAbort();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    if (n > START_SLICE) {
      ctx.corkSearch();
      this.corked = true;
    }
    this.startSome();
  }

  /**
   * Acquire the next slice of names and send what it needs, then let the event loop run before
   * the next slice: the server's answers to the first names are handled (and its next requests
   * sent) while later names are still being set up, so client and server work side by side.
   */
  private startSome(): void {
    const { ctx, names, items } = this;
    const end = Math.min(names.length, this.started + START_SLICE);
    for (let i = this.started; i < end && this.remaining > 0; i++) {
      const name = names[i]!;
      let ch: Channel;
      try {
        ch = ctx.acquire(name);
      } catch (e) {
        this.fail(i, e instanceof CaError ? e : new ProtocolError(String(e), name));
        continue;
      }
      const item = new Item(this, i, ch);
      items[i] = item;
      if (ch.state === 'connected') this.read(item);
      else {
        item.waiting = true;
        ch.addWaiter(item);
      }
    }
    this.started = end;
    if (end < names.length && this.remaining > 0) setImmediate(() => this.startSome());
    else this.uncork();
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.ctx.uncorkSearch();
  }

  private planFor(ch: Channel, serverVersion: number): ReadPlan {
    if (ch.nativeType === this.planType && ch.nativeCount === this.planCount && serverVersion === this.planVersion) return this.lastPlan!;
    const plan = planRead(ch, this.opts, this.ctx.maxArrayBytes, serverVersion);
    this.planType = ch.nativeType;
    this.planCount = ch.nativeCount;
    this.planVersion = serverVersion;
    this.lastPlan = plan;
    return plan;
  }

  read(item: Item): void {
    if (this.results[item.i]) return;
    const ch = item.ch;
    const t = ch.transport;
    if (!t || ch.state !== 'connected') {
      // Lost again before we got here: wait for the next connection.
      item.waiting = true;
      ch.addWaiter(item);
      return;
    }
    if (!ch.canRead) return this.fail(item.i, new AccessDeniedError('no read access', ch.name));
    const circuit = t.circuit;
    let plan: ReadPlan;
    try {
      plan = this.planFor(ch, circuit.serverVersion);
    } catch (e) {
      return this.fail(item.i, e as CaError);
    }
    item.plan = plan;
    item.circuit = circuit;
    item.ioid = circuit.read(ch.sid, plan.dbrType, plan.count, item);
  }

  reply(item: Item, h: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void {
    const i = item.i;
    if (this.results[i]) return;
    const plan = item.plan!;
    const d = decodeDbrParts(h.dataType, h.dataCount, payload, plan.asArray, plan.longString, owned, hostOrder);
    if (!d) return this.fail(i, new ProtocolError('undecodable reply', item.ch.name));
    this.results[i] = new Answer(
      this.names[i]!, performance.now() - this.t0,
      d.value, h.dataType, h.dataCount, d.status, d.severity, d.secondsPastEpoch, d.nanoseconds, d.metadata,
    );
    if (--this.remaining === 0) this.done();
  }

  fail(i: number, error: CaError): void {
    if (this.results[i]) return;
    this.results[i] = { name: this.names[i]!, ok: false, error, code: error.code, elapsedMs: performance.now() - this.t0 };
    if (--this.remaining === 0) this.done();
  }

  private done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.uncork();
    if (this.onAbort) this.opts.signal?.removeEventListener('abort', this.onAbort);
    const { ctx, items } = this;
    const closed = ctx.closed;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (!item) continue;
      if (item.waiting) item.ch.removeWaiter(item);
      if (item.ioid) item.circuit?.abandon(item.ioid);
      if (!closed) ctx.release(item.ch);
    }
    this.resolve(this.results as SnapshotResult[]);
  }
}

export function runSnapshot(ctx: Context, names: readonly string[], opts: SnapshotOptions): Promise<SnapshotResult[]> {
  const timeout = checkTimeout(opts.timeout);
  if (names.length === 0) return Promise.resolve([]);
  const b = new Batch(ctx, names, opts);
  b.start(timeout);
  return b.promise;
}
