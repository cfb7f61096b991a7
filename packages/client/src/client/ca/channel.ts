// A CA channel: the wire side of its transitions, searching -> connecting -> connected ->
// (disconnected -> searching) -> closed, on top of the life every channel shares
// (../channel-life.ts); its native type and count, and its access rights.
import { CA_ACCESS_READ, CA_ACCESS_WRITE, NATIVE_TYPE_NAMES, type NativeTypeName } from '../../ca/constants.js';
import type { CircuitChannel, FailReason } from '../../ca/circuit.js';
import type { TcpCircuit } from '../../transport/ca/tcp.js';
import type { SearchTarget } from '../../transport/ca/udp.js';
import { ChannelLife, type ChannelOwner } from '../channel-life.js';
import { type EpicsError, DisconnectedError, ProtocolError, RemoteError } from '../errors.js';

export type { ChannelChange, ChannelState, ConnectionListener } from '../channel-life.js';

/** A one-shot wait for the channel to connect, as an object (no closure per waiter). */
export interface ConnectWaiter {
  channelConnected(ch: Channel): void;
}

/** The channel as its own transitions see it: the fields others only read are writable here. */
type Writable = { -readonly [K in 'nativeType' | 'nativeCount' | 'transport']: Channel[K] };

export class Channel extends ChannelLife<ConnectWaiter> implements CircuitChannel, SearchTarget {
  readonly nativeType: number = -1;
  readonly nativeCount: number = 0;
  /** The circuit of a connecting or connected channel. */
  readonly transport: TcpCircuit | undefined;
  private rights = 0;

  constructor(
    owner: ChannelOwner,
    cid: number,
    name: string,
    /** Bytes of the name on the wire (NUL-terminated, padded to 8). */
    readonly paddedLength: number,
  ) {
    super(owner, cid, name);
  }

  get canRead(): boolean {
    return (this.rights & CA_ACCESS_READ) !== 0;
  }

  get canWrite(): boolean {
    return (this.rights & CA_ACCESS_WRITE) !== 0;
  }

  get nativeTypeName(): NativeTypeName | undefined {
    return NATIVE_TYPE_NAMES[this.nativeType];
  }

  // ---- transitions ----

  /** searching -> connecting: a server answered the search; ask its circuit for the channel. */
  found(t: TcpCircuit): void {
    if (this.state !== 'searching') return;
    this.setState('connecting');
    (this as Writable).transport = t;
    t.circuit.createChannel(this);
  }

  /** CircuitChannel: connecting -> connected. */
  onCreated(sid: number, nativeType: number, nativeCount: number): void {
    if (this.state !== 'connecting') return;
    const w = this as Writable;
    w.nativeType = nativeType;
    w.nativeCount = nativeCount;
    this.becameConnected(sid);
  }

  /** CircuitChannel: the server's access rights (before the channel connects, and on any change after). */
  onAccessRights(rights: number): void {
    const changed = rights !== this.rights;
    this.rights = rights;
    if (changed && this.state === 'connected') this.notify('access');
  }

  /** CircuitChannel: the server refused the channel; search again. */
  onCreateFailed(_status: number, message: string): void {
    this.lastFailure = message;
    this.disconnected();
  }

  /** CircuitChannel: the server dropped the channel; search again. */
  onServerDisconnect(): void {
    this.disconnected();
  }

  protected dropConnection(): void {
    (this as Writable).transport = undefined;
    this.rights = 0;
  }

  /** The manager forgets the channel: tell its circuit (and the server, when connected), then close. */
  discard(): void {
    this.transport?.circuit.clearChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  /** -> closed, for good. */
  close(): void {
    if (this.state === 'closed') return;
    this.shut();
    (this as Writable).transport = undefined;
  }

  /** The error of an operation that ended without a reply. */
  failureError(reason: FailReason): EpicsError {
    if (reason.kind === 'disconnected') {
      return new DisconnectedError(`the circuit was lost${reason.message ? ` (${reason.message})` : ''}`, this.name);
    }
    if (reason.kind === 'protocol') return new ProtocolError(`protocol error from the server: ${reason.message}`, this.name);
    return RemoteError.ca(reason.status, reason.message, this.name);
  }
}
