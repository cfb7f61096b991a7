// The monitor of one channel: its EVENT_ADD subscription (made again after each reconnect), the
// decoding of updates, and their delivery with the connection events to a callback or the queue.
import { DBE_ALARM, DBE_LOG, DBE_PROPERTY, DBE_VALUE } from '../ca/constants.js';
import type { FailReason, IoHandler } from '../ca/circuit.js';
import type { Header } from '../ca/header.js';
import type { TcpCircuit } from '../transport/tcp.js';
import { getLogger } from '../log.js';
import type { Channel } from './channel.js';
import type { ReadPlan } from './convert.js';
import { AbortedError, BadArgumentError, type CaError, ProtocolError } from './errors.js';
import type { ChannelManager } from './manager.js';
import { Monitor, type MonitorCallback, type MonitorEvent as AnyFormEvent, type MonitorOptions } from './monitor.js';
import type { AnyReading } from './reading.js';
import { EventQueue } from './queue.js';
import { decodeReply, ReadSpec } from './read.js';

const log = getLogger('ca.monitor');

function maskOf(m: MonitorOptions['mask']): number {
  if (m === undefined) return DBE_VALUE | DBE_ALARM;
  if (typeof m === 'number') return m;
  return (m.value ? DBE_VALUE : 0) | (m.log ? DBE_LOG : 0) | (m.alarm ? DBE_ALARM : 0) | (m.property ? DBE_PROPERTY : 0);
}

type MonitorEvent = AnyFormEvent<AnyReading>;

export class ChannelMonitor extends Monitor<AnyReading> implements IoHandler {
  private received = 0;
  private readonly ch: Channel;
  private readonly mask: number;
  private readonly spec: ReadSpec;
  private readonly queue: EventQueue<MonitorEvent> | undefined;
  private plan: ReadPlan | undefined;
  private subid = 0;
  private sub: TcpCircuit | undefined;
  private closed = false;
  private readonly unlisten: () => void;
  private timer: NodeJS.Timeout | undefined;
  private abort: (() => void) | undefined;
  /** The iterator waiting for the next event. */
  private waiter: ((r: IteratorResult<MonitorEvent>) => void) | undefined;
  private failure: CaError | undefined;

  constructor(
    private readonly mgr: ChannelManager,
    name: string,
    private readonly opts: MonitorOptions,
    private readonly callback: MonitorCallback<AnyReading> | undefined,
  ) {
    super();
    const ch = mgr.acquire(name);
    this.ch = ch;
    this.mask = maskOf(opts.mask);
    if (this.mask === 0) {
      mgr.release(ch);
      throw new BadArgumentError('the event mask selects nothing', ch.name);
    }
    this.spec = new ReadSpec(opts, mgr.config.maxArrayBytes);
    if (!callback) this.queue = new EventQueue(Math.max(1, opts.queueSize ?? 1000));
    mgr.hold(this);
    this.unlisten = ch.listen((change) => {
      if (change === 'connected') this.onConnected();
      else if (change === 'disconnected') this.onDisconnected();
      else this.onAccess();
    });
    const signal = opts.signal;
    if (signal) {
      if (signal.aborted) queueMicrotask(() => this.fail(new AbortedError(undefined, ch.name, signal.reason)));
      this.abort = () => this.fail(new AbortedError(undefined, ch.name, signal.reason));
      signal.addEventListener('abort', this.abort, { once: true });
    }
    if (opts.timeout !== undefined) {
      this.timer = setTimeout(() => {
        if (!ch.connected) this.fail(ch.timeoutError());
      }, opts.timeout);
    }
    if (ch.connected) queueMicrotask(() => this.onConnected());
  }

  get overruns(): number {
    return this.queue?.overruns ?? 0;
  }

  get updates(): number {
    return this.received;
  }

  get name(): string {
    return this.ch.name;
  }

  get active(): boolean {
    return this.sub !== undefined;
  }

  private onConnected(): void {
    const ch = this.ch;
    if (this.closed || this.sub || !ch.connected) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const t = ch.transport!;
    this.emit({
      kind: 'connected', name: ch.name, nativeType: ch.nativeType, nativeCount: ch.nativeCount,
      readAccess: ch.canRead, writeAccess: ch.canWrite,
    });
    try {
      this.plan = this.spec.planFor(ch, t.circuit.serverVersion);
    } catch (e) {
      this.fail(e as CaError);
      return;
    }
    this.sub = t;
    this.subid = t.circuit.subscribe(ch.sid, this.plan.dbrType, this.plan.count, this.mask, this);
  }

  private onAccess(): void {
    if (this.closed) return;
    this.emit({ kind: 'access', name: this.ch.name, readAccess: this.ch.canRead, writeAccess: this.ch.canWrite });
  }

  private onDisconnected(): void {
    if (this.closed) return;
    if (this.sub) this.sub.circuit.dropSubscription(this.subid);
    this.sub = undefined;
    this.emit({ kind: 'disconnected', name: this.ch.name });
  }

  /** IoHandler: one update from the server. */
  onReply(h: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void {
    const r = decodeReply(this.plan!, h, payload, owned, hostOrder);
    if (!r) {
      this.fail(new ProtocolError(`undecodable update (type ${h.dataType}, count ${h.dataCount})`, this.ch.name));
      return;
    }
    this.received++;
    this.emit(r as AnyReading);
    if (owned && this.opts.reuseArrays && this.callback) this.sub?.recycle(payload);
  }

  /** IoHandler: the subscription failed. A lost circuit is reported by the channel listener instead. */
  onFail(reason: FailReason): void {
    if (reason.kind === 'disconnected' || reason.kind === 'protocol') return;
    this.sub = undefined;
    this.fail(this.ch.failureError(reason));
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
      this.waiter = undefined;
      w({ value: ev, done: false });
      return;
    }
    this.queue!.push(ev);
  }

  private fail(err: CaError): void {
    if (this.closed) return;
    this.emit({ kind: 'error', name: this.ch.name, error: err });
    if (!this.callback) this.failure = err;
    this.close();
  }

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
    this.mgr.unhold(this);
    this.mgr.release(this.ch);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.failure && this.failure.code !== 'ERR_CA_ABORTED') w({ value: { kind: 'error', name: this.ch.name, error: this.failure }, done: false });
      else w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<MonitorEvent> {
    const q = this.queue;
    if (!q) throw new BadArgumentError('this monitor delivers to a callback; it is not iterable', this.ch.name);
    return {
      next: (): Promise<IteratorResult<MonitorEvent>> => {
        if (q.length > 0) return Promise.resolve({ value: q.shift()!, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((res) => (this.waiter = res));
      },
      return: (): Promise<IteratorResult<MonitorEvent>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
