// The monitor of one PV Access channel: a pipelined MONITOR (INIT with the window and the server's
// queue, asked again with a shorter queue when the INIT's reply shows values that hold arrays;
// START; an ack for every half window consumed), made again after each reconnect; updates become
// PvaReadings delivered with the connection events to a callback or the bounded queue. A server
// that ignores a pipelined INIT (Phoebus core-pva's answers only a plain one) is found out by an
// echo sent after it, and gets plain MONITORs from then on.
import { Cmd } from '../../pva/constants.js';
import type { BitSet } from '../../pva/bitset.js';
import { buildPvRequest, parsePvRequest, type PvRequestOptions } from '../../pva/pvrequest.js';
import type { ClientSession, OpHandler, PvaFailReason } from '../../pva/session.js';
import { isSuccess, type Status } from '../../pva/status.js';
import type { FieldDesc, StructureDesc } from '../../pva/types.js';
import { largeViews } from '../../pva/update-buffers.js';
import type { PvStructure, Typed } from '../../pva/values.js';
import { getLogger } from '../../log.js';
import { POOLED_MIN } from '../../transport/buffer-pool.js';
import { DeliveringMonitor } from '../delivery.js';
import { BadArgumentError } from '../errors.js';
import type { MonitorCallback } from '../monitor.js';
import type { PvaChannel } from './channel.js';
import type { PvaManager } from './manager.js';
import { pvaFailure, remoteError, type PvaRequest } from './ops.js';
import { PvaReading } from './reading.js';

const log = getLogger('pva.monitor');

export interface PvaMonitorOptions {
  /** The pvRequest, e.g. "field(value,alarm,timeStamp)" (default: every field). */
  request?: PvaRequest;
  /**
   * Updates the server may send ahead of our acks (pipelining; default 16): acknowledged as they
   * are taken (the callback returned, the iterator took one), so that at most this many wait here
   * for a slow consumer (docs/library.md, flow control).
   */
  pipelineSize?: number;
  /** Iterator form: events kept before the oldest update is dropped (default 1000; the window bounds updates first). */
  queueSize?: number;
  /** Fail with a not-found error if the channel is not connected within this many ms. */
  timeout?: number;
  signal?: AbortSignal;
  /**
   * Callback form only: large arrays (1 MB and up) are valid only during the callback, and
   * their memory is reused for a later update (no allocation per update). Copy what you keep.
   */
  reuseArrays?: boolean;
}

const requests = new Map<string, Typed>();

/**
 * The queue the server keeps for a pipelined monitor whose values hold arrays, unless the
 * pvRequest names its own (record[queueSize=N]): QSRV's and pvxs's default. Other monitors ask for
 * a queue as long as their window. QSRV keeps a copy of the value per queued update, and for a
 * large array a long queue cuts the updates it makes by a third to a half (pva-array-window.mjs);
 * for many small monitors at a high rate it keeps updates from being squashed (pva-100k.mjs).
 */
const ARRAY_QUEUE = 4;

/** How long a pipelined MONITOR INIT waits for its reply before the server is asked, by an echo, whether it ignored it. */
const PIPELINE_PROBE_MS = 1000;

/** The pvRequest of a pipelined monitor asking for a server queue of `queue` unless it names its own, or (0) of a plain one. */
function monitorRequest(req: PvaRequest | undefined, queue: number): Typed {
  if (typeof req === 'string' || req === undefined) {
    const key = `${queue} ${req ?? ''}`;
    let t = requests.get(key);
    if (!t) {
      t = buildMonitorRequest(parseRequest(req), queue);
      if (requests.size < 64) requests.set(key, t);
    }
    return t;
  }
  return buildMonitorRequest(req, queue);
}

function parseRequest(req: string | undefined): PvRequestOptions {
  try {
    return req === undefined ? {} : parsePvRequest(req);
  } catch (e) {
    throw new BadArgumentError(`bad pvRequest '${req}': ${(e as Error).message}`);
  }
}

function buildMonitorRequest(o: PvRequestOptions, queue: number): Typed {
  return queue ? buildPvRequest({ ...o, record: { queueSize: queue, ...o.record, pipeline: 'true' } }) : buildPvRequest(o);
}

/** The request for a monitor whose values hold arrays, or null when the pvRequest names its queue or the window is no longer. */
function arrayRequest(req: PvaRequest | undefined, pipelineSize: number): Typed | null {
  if (pipelineSize <= ARRAY_QUEUE) return null;
  const o = typeof req === 'object' ? req : parseRequest(req);
  return o.record?.queueSize === undefined ? monitorRequest(req, ARRAY_QUEUE) : null;
}

/** Whether a monitor's values hold arrays: its value field an array or a union (NTNDArray), or a structure of arrays only (NTTable). */
function holdsArrays(type: FieldDesc | null): boolean {
  const value = type?.kind === 'structure' ? type.fields.find((f) => f.name === 'value')?.type : undefined;
  if (!value) return false;
  if (value.kind === 'structure') return value.fields.length > 0 && value.fields.every((f) => f.type.kind.endsWith('Array'));
  return value.kind !== 'scalar';
}

export class PvaMonitor extends DeliveringMonitor<PvaReading, PvaChannel> implements OpHandler {
  private readonly request: Typed;
  private readonly pipelineSize: number;
  /** The request without pipelining, made when a server needs it. */
  private plainRequest: Typed | undefined;
  /** The request with the shorter server queue, once the values turned out to hold arrays (null: not to be used). */
  private arraysRequest: Typed | null | undefined;
  private readonly pvRequest: PvaRequest | undefined;
  /** This subscription is pipelined (acks go to the server). */
  private pipelined = false;
  private probe: NodeJS.Timeout | undefined;
  private session: ClientSession | undefined;
  private requestId = 0;
  private type: StructureDesc | undefined;
  private unacked = 0;
  /** Updates of an earlier subscription still queued when this one was made. */
  private staleUpdates = 0;
  private readonly unlisten: () => void;
  /** reuseArrays: the large buffers the last update's arrays are views of. */
  private lastBuffers: Set<ArrayBuffer> | undefined;

  constructor(
    private readonly mgr: PvaManager,
    name: string,
    opts: PvaMonitorOptions,
    callback: MonitorCallback<PvaReading> | undefined,
  ) {
    const pipelineSize = Math.max(2, Math.floor(opts.pipelineSize ?? 16));
    const request = monitorRequest(opts.request, pipelineSize);
    super(mgr.acquire(name), callback, log);
    this.pipelineSize = pipelineSize;
    this.request = request;
    this.pvRequest = opts.request;
    if (opts.reuseArrays && callback) this.lastBuffers = new Set();
    mgr.hold(this);
    this.unlisten = this.ch.listen((change) => (change === 'connected' ? this.onConnected() : this.onDisconnected()));
    this.begin(opts);
  }

  get active(): boolean {
    return this.requestId !== 0 && this.type !== undefined;
  }

  protected onConnected(): void {
    const ch = this.ch;
    if (this.closed || this.requestId || !ch.connected) return;
    this.stopTimer();
    this.emit({ kind: 'connected', name: ch.name, server: ch.transport!.key });
    this.subscribe();
  }

  /** MONITOR INIT on the connected channel: pipelined unless its server ignores that. */
  private subscribe(): void {
    const ch = this.ch;
    const t = ch.transport!;
    this.session = t.session;
    this.type = undefined;
    this.unacked = 0;
    this.staleUpdates = this.queuedUpdates;
    this.pipelined = !t.pipelineIgnored;
    if (!this.pipelined) {
      this.plainRequest ??= monitorRequest(this.pvRequest, 0);
      this.requestId = this.session.init(Cmd.MONITOR, ch.sid, this.plainRequest, this);
      return;
    }
    this.requestId = this.session.init(Cmd.MONITOR, ch.sid, this.arraysRequest ?? this.request, this, this.pipelineSize);
    this.armProbe();
  }

  /** No INIT reply yet after a while: ask the server (by an echo) whether it ignored the pipelined INIT. */
  private armProbe(): void {
    clearTimeout(this.probe);
    const id = this.requestId;
    this.probe = setTimeout(() => {
      if (this.closed || this.requestId !== id || this.type) return;
      if (!this.session!.probeInit(id)) this.armProbe();
    }, PIPELINE_PROBE_MS);
    this.probe.unref();
  }

  /** The server answered an echo sent after the pipelined INIT, not the INIT: ask again, plainly. */
  onInitIgnored(): void {
    const t = this.ch.transport;
    if (this.closed || !t) return;
    if (!t.pipelineIgnored)
      log.info({ server: t.key, pv: this.ch.name }, 'the server ignores pipelined monitors: plain monitors on this connection');
    t.pipelineIgnored = true;
    this.session!.destroy(this.requestId);
    this.subscribe();
  }

  private onDisconnected(): void {
    if (this.closed) return;
    clearTimeout(this.probe);
    this.requestId = 0;
    this.type = undefined;
    this.emit({ kind: 'disconnected', name: this.ch.name });
  }

  onInit(status: Status, type: FieldDesc | null): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.fail(remoteError(this.ch.name, status));
    }
    clearTimeout(this.probe);
    this.probe = undefined;
    // Values that hold arrays: INIT again, before START (nothing delivered yet), with the shorter
    // server queue; from then on, and after a reconnect, the monitor asks for that one at once.
    if (this.pipelined && this.arraysRequest === undefined && holdsArrays(type)) {
      this.arraysRequest = arrayRequest(this.pvRequest, this.pipelineSize);
      if (this.arraysRequest) {
        this.session!.destroy(this.requestId);
        return this.subscribe();
      }
    }
    this.type = type as StructureDesc;
    this.session!.monitorStart(this.requestId);
  }

  onUpdate(value: PvStructure, _changed: BitSet): void {
    if (this.closed || !this.type) return;
    this.received++;
    // Each update is a new structure (UpdateBase builds what an update changes and shares the
    // rest with the last one; nothing changes it later): the reading may keep it.
    this.emit(new PvaReading(this.type, value));
    if (this.lastBuffers) this.recycle(value);
  }

  /**
   * An update was taken (its callback returned, the iterator took it, or the full queue dropped
   * it): every half window taken, the server may send that many more. A consumer slower than the
   * updates closes this monitor's window, and the server keeps the latest value for it (QSRV
   * squashes its queue) without holding back the connection's other monitors.
   */
  protected override consumed(): void {
    if (this.staleUpdates > 0) {
      this.staleUpdates--; // queued before the last subscribe: not this subscription's to ack
      return;
    }
    if (this.pipelined && ++this.unacked >= this.pipelineSize >> 1 && this.requestId) {
      this.session!.monitorAck(this.requestId, this.unacked);
      this.unacked = 0;
    }
  }

  /**
   * reuseArrays, after the callback: the memory of the last update's arrays that this update
   * replaced goes back to the connection for its next large message: nothing views it now (the
   * last reading's callback has returned, and this update shares only the arrays it did not replace).
   * This update's own memory is offered for the next update, which is read into it if it replaces
   * every array there (src/pva/update-buffers.ts).
   */
  private recycle(value: PvStructure): void {
    const last = this.lastBuffers!;
    const views = largeViews(value, this.type!, POOLED_MIN);
    const t = this.ch.transport;
    for (const b of last) if (!views.has(b)) t?.recycle(b);
    last.clear();
    for (const b of views.keys()) last.add(b);
    if (!this.requestId) return; // closed by the callback
    if (views.size) t?.offerUpdate(this.requestId, views);
    else t?.withdrawUpdate(this.requestId);
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

  protected release(): void {
    clearTimeout(this.probe);
    this.unlisten();
    if (this.requestId) {
      this.session?.destroy(this.requestId);
      this.ch.transport?.withdrawUpdate(this.requestId);
    }
    this.requestId = 0;
    this.mgr.unhold(this);
    this.mgr.release(this.ch);
  }
}
