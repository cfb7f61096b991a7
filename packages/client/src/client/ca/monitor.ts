// The monitor of one channel: its EVENT_ADD subscription (made again after each reconnect), the
// decoding of updates, and their delivery with the connection events to a callback or the queue.
import { DBE_ALARM, DBE_LOG, DBE_PROPERTY, DBE_VALUE } from '../../ca/constants.js';
import type { FailReason, IoHandler } from '../../ca/circuit.js';
import type { Header } from '../../ca/header.js';
import type { TcpCircuit } from '../../transport/ca/tcp.js';
import { getLogger } from '../../log.js';
import type { Channel } from './channel.js';
import type { ReadPlan } from './convert.js';
import { DeliveringMonitor } from '../delivery.js';
import { BadArgumentError, type EpicsError, ProtocolError } from '../errors.js';
import type { ChannelManager } from './manager.js';
import type { MonitorCallback, MonitorOptions } from '../monitor.js';
import type { AnyReading } from './reading.js';
import { decodeDbr } from '../../ca/dbr.js';
import { decodeReply, ReadSpec } from './read.js';

const log = getLogger('ca.monitor');

function maskOf(m: MonitorOptions['mask']): number {
  if (m === undefined) return DBE_VALUE | DBE_ALARM;
  if (typeof m === 'number') return m;
  return (m.value ? DBE_VALUE : 0) | (m.log ? DBE_LOG : 0) | (m.alarm ? DBE_ALARM : 0) | (m.property ? DBE_PROPERTY : 0);
}

export class ChannelMonitor extends DeliveringMonitor<AnyReading, Channel> implements IoHandler {
  /** The plan's decodeFlags, here because the update path reads nothing else of the plan. */
  private decodeFlags = 0;
  private readonly mask: number;
  private readonly spec: ReadSpec;
  private plan: ReadPlan | undefined;
  private subid = 0;
  private sub: TcpCircuit | undefined;
  private readonly unlisten: () => void;

  constructor(
    private readonly mgr: ChannelManager,
    name: string,
    private readonly opts: MonitorOptions,
    callback: MonitorCallback<AnyReading> | undefined,
  ) {
    super(mgr.acquire(name), callback, log);
    const ch = this.ch;
    this.mask = maskOf(opts.mask);
    if (this.mask === 0) {
      mgr.release(ch);
      throw new BadArgumentError('the event mask selects nothing', ch.name);
    }
    this.spec = new ReadSpec(opts, mgr.config.maxArrayBytes);
    mgr.hold(this);
    this.unlisten = ch.listen((change) => {
      if (change === 'connected') this.onConnected();
      else if (change === 'disconnected') this.onDisconnected();
      else this.onAccess();
    });
    this.begin(opts);
  }

  get active(): boolean {
    return this.sub !== undefined;
  }

  protected onConnected(): void {
    const ch = this.ch;
    if (this.closed || this.sub || !ch.connected) return;
    this.stopTimer();
    const t = ch.transport!;
    this.emit({
      kind: 'connected',
      name: ch.name,
      nativeType: ch.nativeType,
      nativeCount: ch.nativeCount,
      readAccess: ch.canRead,
      writeAccess: ch.canWrite,
    });
    try {
      this.plan = this.spec.planFor(ch, t.circuit.serverVersion);
      this.decodeFlags = this.plan.decodeFlags;
    } catch (e) {
      this.fail(e as EpicsError);
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

  /** IoHandler: one update decoded where it lies in the read (an undecodable one goes to onReply). */
  onReplyAt(h: Header, bytes: Uint8Array, offset: number): boolean {
    const r = decodeDbr(h.dataType, h.dataCount, bytes, this.decodeFlags, undefined, offset, h.payloadSize);
    if (!r) return false;
    this.received++;
    this.emit(r as AnyReading);
    return true;
  }

  /** IoHandler: the subscription failed. A lost circuit is reported by the channel listener instead. */
  onFail(reason: FailReason): void {
    if (reason.kind === 'disconnected' || reason.kind === 'protocol') return;
    this.sub = undefined;
    this.fail(this.ch.failureError(reason));
  }

  protected release(): void {
    this.unlisten();
    if (this.sub && this.ch.connected && this.plan) {
      this.sub.circuit.unsubscribe(this.subid, this.ch.sid, this.plan.dbrType, this.plan.count);
    }
    this.sub = undefined;
    this.mgr.unhold(this);
    this.mgr.release(this.ch);
  }
}
