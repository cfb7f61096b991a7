// A PV Access channel: the wire side of its transitions, searching -> connecting -> connected ->
// (disconnected -> searching) -> closed, on top of the life every channel shares
// (../channel-life.ts); its waiters also hear when it closes for good.
import type { ClientSession, OpHandler, SessionChannel } from '../../pva/session.js';
import type { Status } from '../../pva/status.js';
import type { PvaCircuit } from '../../transport/pva/tcp.js';
import type { PvaSearchTarget } from '../../transport/pva/udp.js';
import { ChannelLife, type ChannelOwner } from '../channel-life.js';
import type { TlsError } from '../errors.js';

export interface PvaConnectWaiter {
  channelConnected(ch: PvaChannel): void;
  /** The channel closed for good (its Context closed) before it connected. */
  channelClosed(ch: PvaChannel): void;
}

/** How long a kept request stays on the server unused (see PvaChannel.keep). */
export const KEPT_REQUEST_MS = 10_000;

/** A GET or PUT request kept between calls. */
interface Kept {
  key: string;
  session: ClientSession;
  id: number;
  used: number;
}

export class PvaChannel extends ChannelLife<PvaConnectWaiter> implements SessionChannel, PvaSearchTarget {
  transport: PvaCircuit | undefined;
  /**
   * A GET and a PUT request kept after a call that succeeded: PV Access lets a request be
   * executed again, so the next call of that command with the same pvRequest skips the INIT round
   * trip. One per command; destroyed after KEPT_REQUEST_MS unused and with the channel, forgotten
   * with the connection. Made on the first one kept (a monitored channel never keeps any).
   */
  private kept: Map<number, Kept> | undefined;
  private keptTimer: NodeJS.Timeout | undefined;
  /** A GET completed on this channel: the next one is kept (a name read once is not). */
  readBefore = false;

  constructor(owner: ChannelOwner, cid: number, name: string) {
    super(owner, cid, name);
  }

  /** searching -> connecting: a server answered; ask its connection for the channel. */
  found(c: PvaCircuit): void {
    if (this.state !== 'searching') return;
    this.setState('connecting');
    this.transport = c;
    c.session.createChannel(this);
  }

  /** SessionChannel: connecting -> connected. */
  onCreated(sid: number): void {
    if (this.state !== 'connecting') return;
    this.becameConnected(sid);
  }

  /** SessionChannel: the server refused the channel; search again after a pause. */
  onCreateFailed(status: Status): void {
    this.lastFailure = status.message || 'refused';
    this.backOff();
    this.disconnected();
  }

  /** A server answered that this channel cannot use (TLS needed or not offered): search again after a pause. */
  refused(e: TlsError): void {
    this.tlsFailure = e;
    this.backOff();
    this.disconnected();
  }

  /** SessionChannel: the server destroyed the channel. */
  onDestroyed(): void {
    this.disconnected();
  }

  /** The kept `command` request for pvRequest `key` on `session`, now `handler`'s to use and end (0: none). */
  takeKept(command: number, key: string, session: ClientSession, handler: OpHandler): number {
    const k = this.kept?.get(command);
    if (k?.key !== key || k.session !== session) return 0;
    this.kept!.delete(command);
    return session.rebind(k.id, handler) ? k.id : 0;
  }

  /** Keep request `id` of `command` for the next call with pvRequest `key`; false when one is kept already. */
  keep(command: number, key: string, session: ClientSession, id: number): boolean {
    if (this.kept?.has(command) || this.state !== 'connected' || this.transport?.session !== session) return false;
    const kept: Kept = { key, session, id, used: performance.now() };
    // While kept, the request's only news is the connection's end.
    const forget = (): void => {
      if (this.kept?.get(command) === kept) this.kept.delete(command);
    };
    if (!session.rebind(id, { onFail: forget })) return false;
    (this.kept ??= new Map()).set(command, kept);
    this.keptTimer ??= setTimeout(() => this.expireKept(), KEPT_REQUEST_MS).unref();
    return true;
  }

  /** One timer per idle period: destroy the requests unused for KEPT_REQUEST_MS. */
  private expireKept(): void {
    this.keptTimer = undefined;
    const kept = this.kept;
    if (!kept) return;
    let next = Number.POSITIVE_INFINITY;
    const t = performance.now();
    for (const [command, k] of kept) {
      const idle = t - k.used;
      if (idle < KEPT_REQUEST_MS) next = Math.min(next, KEPT_REQUEST_MS - idle);
      else {
        kept.delete(command);
        k.session.destroy(k.id);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.keptTimer = setTimeout(() => this.expireKept(), next).unref();
  }

  private dropKept(): void {
    if (this.kept) for (const k of this.kept.values()) k.session.destroy(k.id);
    this.kept = undefined;
    if (this.keptTimer) clearTimeout(this.keptTimer);
    this.keptTimer = undefined;
  }

  protected dropConnection(): void {
    this.dropKept();
    this.transport = undefined;
  }

  /** The manager forgets the channel: tell its connection (and the server), then close. */
  discard(): void {
    this.dropKept();
    this.transport?.session.destroyChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  close(): void {
    if (this.state === 'closed') return;
    this.dropKept();
    const ws = this.shut();
    this.transport = undefined;
    if (ws) for (const w of ws) w.channelClosed(this);
  }
}
