// Subscriptions: the callback form and the async-iterator form (a bounded queue that counts
// overruns), with connection events in the stream, and re-subscription after a reconnect.
import { DBE_ALARM, DBE_LOG, DBE_PROPERTY, DBE_VALUE } from '../ca/constants.js';
import { decodeDbrFlags, type Reading } from '../ca/dbr.js';
import type { IoHandler } from '../ca/circuit.js';
import type { Header } from '../ca/header.js';
import type { TcpCircuit } from '../transport/tcp.js';
import { getLogger } from '../log.js';
import type { Channel } from './channel.js';
import type { Context } from './context.js';
import { planRead, type ReadOptions, type ReadPlan } from './convert.js';
import { AbortedError, BadArgumentError, type CaError, ProtocolError } from './errors.js';
import { EventQueue } from './event-queue.js';

const log = getLogger('ca.monitor');

export interface MonitorOptions extends ReadOptions {
  /** Event mask: a number (DBE_* bits) or flags; default value + alarm. */
  mask?: number | { value?: boolean; log?: boolean; alarm?: boolean; property?: boolean };
  /**
   * Iterator form: events kept before the oldest value update is dropped (counted in `overruns`);
   * connection and error events are never dropped. Default 1000.
   */
  queueSize?: number;
  /** Fail with a not-found error if the channel is not connected within this many ms (default: wait forever). */
  timeout?: number;
  /** Closes the monitor when aborted. */
  signal?: AbortSignal;
  /**
   * Callback form only: large arrays (1 MB and up) are valid only during the callback, and
   * their memory is reused for a later update (no allocation per update). Copy what you keep.
   */
  reuseArrays?: boolean;
}

export type ConnectionEvent =
  | { kind: 'connected'; name: string; nativeType: number; nativeCount: number }
  | { kind: 'disconnected'; name: string };
export type MonitorErrorEvent = { kind: 'error'; name: string; error: CaError };
export type MonitorEvent = Reading | ConnectionEvent | MonitorErrorEvent;
export type MonitorCallback = (event: MonitorEvent) => void;

function maskOf(m: MonitorOptions['mask']): number {
  if (m === undefined) return DBE_VALUE | DBE_ALARM;
  if (typeof m === 'number') return m;
  return (m.value ? DBE_VALUE : 0) | (m.log ? DBE_LOG : 0) | (m.alarm ? DBE_ALARM : 0) | (m.property ? DBE_PROPERTY : 0);
}

export class Monitor implements AsyncIterable<MonitorEvent>, IoHandler {
  /** Updates received. */
  updates = 0;
  private readonly mask: number;
  private readonly queue: EventQueue<MonitorEvent>;
  private plan: ReadPlan | undefined;
  private subid = 0;
  private sub: TcpCircuit | undefined;
  private closed = false;
  private readonly unlisten: () => void;
  private timer: NodeJS.Timeout | undefined;
  private abort: (() => void) | undefined;
  // The iterator's waiting reader.
  private waiter: ((r: IteratorResult<MonitorEvent>) => void) | undefined;
  private waiterReject: ((e: unknown) => void) | undefined;
  private failure: CaError | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly ch: Channel,
    private readonly opts: MonitorOptions,
    private readonly callback: MonitorCallback | undefined,
  ) {
    this.mask = maskOf(opts.mask);
    this.queue = new EventQueue(Math.max(1, opts.queueSize ?? 1000));
    if (this.mask === 0) {
      ctx.release(ch);
      throw new BadArgumentError('the event mask selects nothing', ch.name);
    }
    this.unlisten = ch.listen((up) => (up ? this.onConnected() : this.onDisconnected()));
    if (opts.signal) {
      if (opts.signal.aborted) queueMicrotask(() => this.fail(new AbortedError(undefined, ch.name, opts.signal!.reason)));
      this.abort = () => this.fail(new AbortedError(undefined, ch.name, opts.signal!.reason));
      opts.signal.addEventListener('abort', this.abort, { once: true });
    }
    if (opts.timeout !== undefined) {
      this.timer = setTimeout(() => {
        if (!ch.connected) this.fail(ctx.timeoutError(ch));
      }, opts.timeout);
    }
    if (ch.connected) queueMicrotask(() => this.onConnected());
  }

  get name(): string {
    return this.ch.name;
  }

  /** Value updates dropped because the iterator's queue was full. */
  get overruns(): number {
    return this.queue.overruns;
  }

  /** True while the channel is connected and the subscription is in place. */
  get active(): boolean {
    return this.sub !== undefined;
  }

  private onConnected(): void {
    if (this.closed || this.sub || !this.ch.connected) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const t = this.ch.transport!;
    this.emit({ kind: 'connected', name: this.ch.name, nativeType: this.ch.nativeType, nativeCount: this.ch.nativeCount });
    try {
      this.plan = planRead(this.ch, this.opts, this.ctx.maxArrayBytes, t.circuit.serverVersion);
    } catch (e) {
      this.fail(e as CaError);
      return;
    }
    this.sub = t;
    this.subid = t.circuit.subscribe(this.ch.sid, this.plan.dbrType, this.plan.count, this.mask, this);
  }

  private onDisconnected(): void {
    if (this.closed) return;
    if (this.sub) this.sub.circuit.dropSubscription(this.subid);
    this.sub = undefined;
    this.emit({ kind: 'disconnected', name: this.ch.name });
  }

  /** IoHandler: one update from the server. */
  onReply(h: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void {
    const plan = this.plan!;
    const r = decodeDbrFlags(h.dataType, h.dataCount, payload, plan.asArray, plan.longString, owned, hostOrder);
    if (!r) {
      this.fail(new ProtocolError(`undecodable update (type ${h.dataType}, count ${h.dataCount})`, this.ch.name));
      return;
    }
    this.updates++;
    this.emit(r);
    if (owned && this.opts.reuseArrays && this.callback) this.sub?.recycle(payload);
  }

  /** IoHandler: the subscription failed (a disconnect is reported by the channel listener). */
  onFail(reason: Parameters<IoHandler['onFail']>[0]): void {
    // A lost circuit (whatever the cause) is reported by the channel listener; we resubscribe later.
    if (reason.kind === 'disconnected' || reason.kind === 'protocol') return;
    this.sub = undefined;
    this.fail(this.ctx.failError(reason, this.ch.name));
  }

  private emit(ev: MonitorEvent): void {
    if (this.closed) return;
    if (this.callback) {
      try {
        this.callback(ev);
      } catch (e) {
        log.warn({ pv: this.ch.name, err: (e as Error)?.message }, 'monitor callback threw');
      }
      return;
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = this.waiterReject = undefined;
      w({ value: ev, done: false });
      return;
    }
    this.queue.push(ev);
  }

  private fail(err: CaError): void {
    if (this.closed) return;
    this.emit({ kind: 'error', name: this.ch.name, error: err });
    if (!this.callback) this.failure = err;
    this.close();
  }

  /** Cancel the subscription and release the channel. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.abort) this.opts.signal?.removeEventListener('abort', this.abort);
    this.unlisten();
    if (this.sub && this.ch.connected && this.plan) {
      this.sub.circuit.unsubscribe(this.subid, this.ch.sid, this.plan.dbrType, this.plan.count);
    }
    this.sub = undefined;
    this.ctx.monitorClosed(this);
    if (!this.ctx.closed) this.ctx.release(this.ch);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = this.waiterReject = undefined;
      if (this.failure && this.failure.code !== 'ERR_CA_ABORTED') w({ value: { kind: 'error', name: this.ch.name, error: this.failure }, done: false });
      else w({ value: undefined, done: true });
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<MonitorEvent> {
    if (this.callback) throw new BadArgumentError('this monitor delivers to a callback; it is not iterable', this.ch.name);
    return {
      next: (): Promise<IteratorResult<MonitorEvent>> => {
        const ev = this.queue.shift();
        if (ev) return Promise.resolve({ value: ev, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((res, rej) => {
          this.waiter = res;
          this.waiterReject = rej;
        });
      },
      return: (): Promise<IteratorResult<MonitorEvent>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
