// The monitor of one PV Access channel: a pipelined MONITOR (INIT with the queue size, START,
// an ack for every half queue consumed), made again after each reconnect; updates become
// PvaReadings delivered with the connection events to a callback or the bounded queue.
import { Cmd } from '../../pva/constants.js';
import type { BitSet } from '../../pva/bitset.js';
import { buildPvRequest, parsePvRequest, type PvRequestOptions } from '../../pva/pvrequest.js';
import type { ClientSession, OpHandler, PvaFailReason } from '../../pva/session.js';
import { isSuccess, type Status } from '../../pva/status.js';
import type { FieldDesc, StructureDesc } from '../../pva/types.js';
import type { PvStructure, Typed } from '../../pva/values.js';
import { getLogger } from '../../log.js';
import { AbortedError, BadArgumentError, type CaError } from '../errors.js';
import { Monitor, type MonitorCallback, type MonitorEvent } from '../monitor.js';
import { EventQueue } from '../queue.js';
import type { PvaChannel } from './channel.js';
import type { PvaManager } from './manager.js';
import { pvaFailure, remoteError, type PvaRequest } from './ops.js';
import { PvaReading } from './reading.js';

const log = getLogger('pva.monitor');

export interface PvaMonitorOptions {
  /** The pvRequest, e.g. "field(value,alarm,timeStamp)" (default: every field). */
  request?: PvaRequest;
  /** Updates the server may send ahead of our acks (pipelining; default 16). */
  pipelineSize?: number;
  /** Iterator form: events kept before the oldest update is dropped (default 1000). */
  queueSize?: number;
  /** Fail with a not-found error if the channel is not connected within this many ms. */
  timeout?: number;
  signal?: AbortSignal;
}

const requests = new Map<string, Typed>();

function monitorRequest(req: PvaRequest | undefined, pipelineSize: number): Typed {
  if (typeof req === 'string' || req === undefined) {
    const key = `${pipelineSize} ${req ?? ''}`;
    let t = requests.get(key);
    if (!t) {
      t = buildMonitorRequest(req, pipelineSize);
      if (requests.size < 64) requests.set(key, t);
    }
    return t;
  }
  return buildMonitorRequest(req, pipelineSize);
}

function buildMonitorRequest(req: PvaRequest | undefined, pipelineSize: number): Typed {
  let o: PvRequestOptions;
  try {
    o = typeof req === 'string' ? parsePvRequest(req) : req ?? {};
  } catch (e) {
    throw new BadArgumentError(`bad pvRequest '${String(req)}': ${(e as Error).message}`);
  }
  return buildPvRequest({ ...o, record: { ...o.record, queueSize: pipelineSize, pipeline: 'true' } });
}

export class PvaMonitor extends Monitor<PvaReading> implements OpHandler {
  private received = 0;
  private readonly ch: PvaChannel;
  private readonly request: Typed;
  private readonly pipelineSize: number;
  private readonly queue: EventQueue<MonitorEvent<PvaReading>> | undefined;
  private session: ClientSession | undefined;
  private requestId = 0;
  private type: StructureDesc | undefined;
  private unacked = 0;
  private closed = false;
  private readonly unlisten: () => void;
  private timer: NodeJS.Timeout | undefined;
  private abort: (() => void) | undefined;
  private waiter: ((r: IteratorResult<MonitorEvent<PvaReading>>) => void) | undefined;
  private failure: CaError | undefined;

  constructor(private readonly mgr: PvaManager, name: string, private readonly opts: PvaMonitorOptions, private readonly callback: MonitorCallback<PvaReading> | undefined) {
    super();
    this.pipelineSize = Math.max(2, Math.floor(opts.pipelineSize ?? 16));
    this.request = monitorRequest(opts.request, this.pipelineSize);
    const ch = mgr.acquire(name);
    this.ch = ch;
    if (!callback) this.queue = new EventQueue(Math.max(1, opts.queueSize ?? 1000));
    mgr.hold(this);
    this.unlisten = ch.listen((up) => (up ? this.onConnected() : this.onDisconnected()));
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

  get overruns(): number { return this.queue?.overruns ?? 0; }
  get updates(): number { return this.received; }
  get name(): string { return this.ch.name; }
  get active(): boolean { return this.requestId !== 0 && this.type !== undefined; }

  private onConnected(): void {
    const ch = this.ch;
    if (this.closed || this.requestId || !ch.connected) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.emit({ kind: 'connected', name: ch.name, server: `${ch.transport!.host}:${ch.transport!.port}` });
    this.session = ch.transport!.session;
    this.type = undefined;
    this.unacked = 0;
    this.requestId = this.session.init(Cmd.MONITOR, ch.sid, this.request, this, this.pipelineSize);
  }

  private onDisconnected(): void {
    if (this.closed) return;
    this.requestId = 0;
    this.type = undefined;
    this.emit({ kind: 'disconnected', name: this.ch.name });
  }

  onInit(status: Status, type: FieldDesc | null): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.fail(remoteError(this.ch.name, status));
    }
    this.type = type as StructureDesc;
    this.session!.monitorStart(this.requestId);
  }

  onUpdate(value: PvStructure, _changed: BitSet): void {
    if (this.closed || !this.type) return;
    this.received++;
    // Each update is a new structure (the session copies what an update changes): it is the reading's own.
    this.emit(new PvaReading(this.type, value));
    if (++this.unacked >= this.pipelineSize >> 1 && this.requestId) {
      this.session!.monitorAck(this.requestId, this.unacked);
      this.unacked = 0;
    }
  }

  onFinish(status: Status): void {
    this.requestId = 0;
    if (!isSuccess(status)) return this.fail(remoteError(this.ch.name, status));
    this.close();
  }

  onFail(reason: PvaFailReason): void {
    this.requestId = 0;
    if (reason.kind === 'disconnected' || reason.kind === 'protocol') return; // the channel listener reports it
    this.fail(pvaFailure(this.ch, reason));
  }

  private emit(ev: MonitorEvent<PvaReading>): void {
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
    if (this.requestId) this.session?.destroy(this.requestId);
    this.requestId = 0;
    this.mgr.unhold(this);
    this.mgr.release(this.ch);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.failure && this.failure.code !== 'ERR_CA_ABORTED') w({ value: { kind: 'error', name: this.ch.name, error: this.failure }, done: false });
      else w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<MonitorEvent<PvaReading>> {
    const q = this.queue;
    if (!q) throw new BadArgumentError('this monitor delivers to a callback; it is not iterable', this.ch.name);
    return {
      next: (): Promise<IteratorResult<MonitorEvent<PvaReading>>> => {
        if (q.length > 0) return Promise.resolve({ value: q.shift()!, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((res) => (this.waiter = res));
      },
      return: (): Promise<IteratorResult<MonitorEvent<PvaReading>>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
