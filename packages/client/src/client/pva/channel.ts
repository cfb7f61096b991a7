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

/** How long a PUT request stays kept on the server without a put (see PvaChannel.keepPut). */
export const KEPT_PUT_MS = 10_000;

interface KeptPut {
  key: string;
  session: ClientSession;
  id: number;
  used: number;
}

export class PvaChannel extends ChannelLife<PvaConnectWaiter> implements SessionChannel, PvaSearchTarget {
  transport: PvaCircuit | undefined;
  /**
   * A PUT request kept after a put that succeeded: PV Access lets a request be executed again, so
   * the next put with the same pvRequest skips the INIT round trip. One per channel; destroyed
   * after KEPT_PUT_MS unused, with the channel, and forgotten with the connection.
   */
  private kept: KeptPut | undefined;
  private keptTimer: NodeJS.Timeout | undefined;

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

  /** The kept PUT request for pvRequest `key` on `session`, now `handler`'s to use and end (0: none). */
  takePut(key: string, session: ClientSession, handler: OpHandler): number {
    const k = this.kept;
    if (k?.key !== key || k.session !== session) return 0;
    this.kept = undefined;
    return session.rebind(k.id, handler) ? k.id : 0;
  }

  /** Keep PUT request `id` for the next put with pvRequest `key`; false when one is kept already. */
  keepPut(key: string, session: ClientSession, id: number): boolean {
    if (this.kept || this.state !== 'connected' || this.transport?.session !== session) return false;
    const kept: KeptPut = { key, session, id, used: performance.now() };
    // While kept, the request's only news is the connection's end.
    if (!session.rebind(id, { onFail: () => this.kept === kept && (this.kept = undefined) })) return false;
    this.kept = kept;
    this.keptTimer ??= setTimeout(() => this.expirePut(), KEPT_PUT_MS).unref();
    return true;
  }

  /** One timer per idle period: destroy the kept request once unused for KEPT_PUT_MS. */
  private expirePut(): void {
    this.keptTimer = undefined;
    if (!this.kept) return;
    const idle = performance.now() - this.kept.used;
    if (idle >= KEPT_PUT_MS) this.dropPut();
    else this.keptTimer = setTimeout(() => this.expirePut(), KEPT_PUT_MS - idle).unref();
  }

  private dropPut(): void {
    const k = this.kept;
    this.kept = undefined;
    k?.session.destroy(k.id);
    if (this.keptTimer) clearTimeout(this.keptTimer);
    this.keptTimer = undefined;
  }

  protected dropConnection(): void {
    this.dropPut();
    this.transport = undefined;
  }

  /** The manager forgets the channel: tell its connection (and the server), then close. */
  discard(): void {
    this.dropPut();
    this.transport?.session.destroyChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  close(): void {
    if (this.state === 'closed') return;
    this.dropPut();
    const ws = this.shut();
    this.transport = undefined;
    if (ws) for (const w of ws) w.channelClosed(this);
  }
}
