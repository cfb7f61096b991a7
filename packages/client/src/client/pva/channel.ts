// A PV Access channel: the wire side of its transitions, searching -> connecting -> connected ->
// (disconnected -> searching) -> closed, on top of the life every channel shares
// (../channel-life.ts); its waiters also hear when it closes for good.
import type { SessionChannel } from '../../pva/session.js';
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

export class PvaChannel extends ChannelLife<PvaConnectWaiter> implements SessionChannel, PvaSearchTarget {
  transport: PvaCircuit | undefined;

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

  protected dropConnection(): void {
    this.transport = undefined;
  }

  /** The manager forgets the channel: tell its connection (and the server), then close. */
  discard(): void {
    this.transport?.session.destroyChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  close(): void {
    if (this.state === 'closed') return;
    const ws = this.shut();
    this.transport = undefined;
    if (ws) for (const w of ws) w.channelClosed(this);
  }
}
