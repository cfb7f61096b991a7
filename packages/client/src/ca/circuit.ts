// Client side of one virtual circuit, without I/O: the handshake, the channels on it (by cid),
// pending reads/writes (by ioid) and subscriptions (by id). Requests are appended to `out`;
// the transport feeds received messages to receive() and writes out.take() once per tick.
import { CA_MINOR_PROTOCOL_REVISION, Cmd, ECA_NORMAL } from './constants.js';
import type { Header } from './header.js';
import { IdTable } from '../wire/id-table.js';
import { decodeResponse, encodeCreateChan, encodeMessage, encodeReadNotify, type RequestMessage } from './messages.js';
import { ByteWriter } from '../wire/byte-writer.js';

/** A channel as the circuit sees it; implemented by the client layer. */
export interface CircuitChannel {
  readonly cid: number;
  readonly name: string;
  onCreated(sid: number, nativeType: number, nativeCount: number): void;
  onAccessRights(rights: number): void;
  /** The server refused the channel (CREATE_CH_FAIL or an ERROR for CREATE_CHAN). */
  onCreateFailed(status: number, message: string): void;
  /** The server dropped the channel (SERVER_DISCONN): search again. */
  onServerDisconnect(): void;
}

/** Why an operation ended without a reply. */
export type FailReason =
  | { kind: 'disconnected'; message?: string }
  | { kind: 'protocol'; message: string }
  | { kind: 'remote'; status: number; message: string };

/** A pending read/write or a subscription. */
export interface IoHandler {
  /**
   * READ_NOTIFY / EVENT_ADD data, or a WRITE_NOTIFY completion (empty payload). `owned` and
   * `hostOrder` are as the framer delivered them (see MessageHandler).
   */
  onReply(header: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean): void;
  /**
   * EVENT_ADD data read where it lies: `payloadSize` bytes of `bytes` at `offset`, valid during
   * the call. False: not taken here (it then comes to onReply).
   */
  onReplyAt?(header: Header, bytes: Uint8Array, offset: number): boolean;
  onFail(reason: FailReason): void;
}

export interface CircuitEvents {
  /** Ask the transport to flush `out` soon (coalesced). */
  wantFlush(): void;
  /** The server sent something we cannot accept: the transport closes the circuit. */
  protocolError(reason: string): void;
  /** An ECHO reply arrived. */
  echo?(): void;
  /** The server told its minor protocol version (it does so as the circuit opens). */
  version?(minor: number): void;
  /**
   * A SEARCH reply over the circuit (a name server's): `cid` is the searched name's, `address`
   * the server's IPv4 address as a uint32 (0 or 0xffffffff: this circuit's host), `port` its port.
   */
  searchReply?(cid: number, address: number, port: number): void;
}

export class ClientCircuit {
  readonly out = new ByteWriter(8192);
  serverVersion = 0;
  private readonly channels = new Map<number, CircuitChannel>();
  private readonly ios = new Map<number, IoHandler>();
  private readonly subs = new IdTable<IoHandler>();
  private nextIoid = 1;
  /** Set once ioids wrapped around 2^32: from then on, skip ids still pending. */
  private wrapped = false;
  private nextSubid = 1;
  private flushRequested = false;
  closed = false;

  constructor(private readonly events: CircuitEvents) {}

  get channelCount(): number {
    return this.channels.size;
  }

  get subscriptionCount(): number {
    return this.subs.size;
  }

  /** Queue the opening messages: VERSION, HOST_NAME, CLIENT_NAME. */
  hello(priority: number, hostName: string, clientName: string): void {
    this.send({ type: 'VersionRequest', priority, version: CA_MINOR_PROTOCOL_REVISION });
    this.send({ type: 'HostNameRequest', name: hostName });
    this.send({ type: 'ClientNameRequest', name: clientName });
  }

  send(m: RequestMessage): void {
    if (this.closed) return;
    encodeMessage(this.out, m);
    this.requestFlush();
  }

  /** Queue messages already encoded (SEARCH requests, on a name server's circuit). */
  sendEncoded(bytes: Uint8Array): void {
    if (this.closed || bytes.length === 0) return;
    const off = this.out.reserve(bytes.length);
    this.out.bytes.set(bytes, off);
    this.requestFlush();
  }

  private requestFlush(): void {
    if (!this.flushRequested) {
      this.flushRequested = true;
      this.events.wantFlush();
    }
  }

  /** Take the bytes to write (called by the transport when it flushes). */
  take(): Uint8Array | undefined {
    this.flushRequested = false;
    return this.out.length ? this.out.take() : undefined;
  }

  createChannel(ch: CircuitChannel): void {
    this.channels.set(ch.cid, ch);
    if (this.closed) return;
    encodeCreateChan(this.out, ch.name, ch.cid, CA_MINOR_PROTOCOL_REVISION);
    this.requestFlush();
  }

  /** Forget a channel; sends CLEAR_CHANNEL when it had a server id. */
  clearChannel(ch: CircuitChannel, sid: number | undefined): void {
    if (!this.channels.delete(ch.cid)) return;
    if (sid !== undefined) this.send({ type: 'ClearChannelRequest', sid, cid: ch.cid });
  }

  private allocIoid(h: IoHandler): number {
    let id = this.nextIoid;
    // Ids only repeat after 2^32 operations; check for a long-pending one only past the wrap.
    if (this.wrapped) while (this.ios.has(id) || id === 0) id = (id + 1) >>> 0;
    this.nextIoid = (id + 1) >>> 0;
    if (this.nextIoid === 0) this.wrapped = true;
    this.ios.set(id, h);
    return id;
  }

  read(sid: number, dataType: number, count: number, h: IoHandler): number {
    const ioid = this.allocIoid(h);
    if (!this.closed) {
      encodeReadNotify(this.out, dataType, count, sid, ioid);
      this.requestFlush();
    }
    return ioid;
  }

  /** WRITE_NOTIFY when a handler is given, else a plain WRITE. */
  write(sid: number, dataType: number, count: number, payload: Uint8Array, h?: IoHandler): number {
    if (!h) {
      this.send({ type: 'WriteRequest', dataType, count, sid, ioid: 0, payload });
      return 0;
    }
    const ioid = this.allocIoid(h);
    this.send({ type: 'WriteNotifyRequest', dataType, count, sid, ioid, payload });
    return ioid;
  }

  /** Forget a pending read/write (its timeout expired); a late reply is then ignored. */
  abandon(ioid: number): void {
    this.ios.delete(ioid);
  }

  subscribe(sid: number, dataType: number, count: number, mask: number, h: IoHandler): number {
    let id = this.nextSubid;
    while (this.subs.has(id)) id = (id + 1) >>> 0;
    this.nextSubid = (id + 1) >>> 0;
    this.subs.set(id, h);
    this.send({ type: 'EventAddRequest', dataType, count, sid, subscriptionId: id, mask });
    return id;
  }

  unsubscribe(subid: number, sid: number, dataType: number, count: number): void {
    if (!this.subs.delete(subid)) return;
    this.send({ type: 'EventCancelRequest', dataType, count, sid, subscriptionId: subid });
  }

  /** Forget a subscription without telling the server (its channel is gone). */
  dropSubscription(subid: number): void {
    this.subs.delete(subid);
  }

  /** A monitor update where it lies in the read (the framer's InPlaceHandler); false: use receive. */
  receiveAt(h: Header, bytes: Uint8Array, offset: number): boolean {
    if (this.closed || h.command !== Cmd.EVENT_ADD || h.param1 !== ECA_NORMAL || h.payloadSize === 0) return false;
    const sub = this.subs.get(h.param2);
    return sub?.onReplyAt?.(h, bytes, offset) === true;
  }

  /** Dispatch one received message. */
  receive(h: Header, payload: Uint8Array, owned: boolean, hostOrder = false): void {
    if (this.closed) return;
    const c = h.command;
    // Hot paths first, without building a message object.
    if (c === Cmd.EVENT_ADD) {
      const sub = this.subs.get(h.param2);
      if (!sub) return; // cancelled, or the confirmation of EVENT_CANCEL
      if (h.payloadSize === 0 && h.param1 === ECA_NORMAL) return;
      if (h.param1 !== ECA_NORMAL) sub.onFail({ kind: 'remote', status: h.param1, message: '' });
      else sub.onReply(h, payload, owned, hostOrder);
      return;
    }
    if (c === Cmd.READ_NOTIFY || c === Cmd.WRITE_NOTIFY) {
      const io = take(this.ios, h.param2);
      if (!io) return;
      if (h.param1 !== ECA_NORMAL) io.onFail({ kind: 'remote', status: h.param1, message: '' });
      else io.onReply(h, payload, owned, hostOrder);
      return;
    }
    if (c === Cmd.CREATE_CHAN) {
      this.channels.get(h.param1)?.onCreated(h.param2, h.dataType, h.dataCount);
      return;
    }
    if (c === Cmd.ACCESS_RIGHTS) {
      this.channels.get(h.param1)?.onAccessRights(h.param2);
      return;
    }
    const m = decodeResponse(h, payload);
    switch (m.type) {
      case 'VersionResponse':
        this.serverVersion = m.version;
        this.events.version?.(m.version);
        return;
      case 'SearchResponse':
        this.events.searchReply?.(m.cid, m.address, m.port);
        return;
      case 'CreateChFailResponse':
        take(this.channels, m.cid)?.onCreateFailed(0, 'channel creation failed');
        return;
      case 'ServerDisconnResponse':
        take(this.channels, m.cid)?.onServerDisconnect();
        return;
      case 'ErrorResponse':
        this.onErrorMessage(m.cid, m.status, m.request, m.message);
        return;
      case 'EchoResponse':
        this.events.echo?.();
        return;
      case 'ClearChannelResponse':
      case 'Beacon':
      case 'NotFoundResponse':
      case 'RepeaterConfirmResponse':
        return;
      case 'Invalid':
        this.events.protocolError(m.reason);
        return;
      default:
        // The rest (EVENT_ADD, READ_NOTIFY, WRITE_NOTIFY, CREATE_CHAN, ACCESS_RIGHTS) was handled above.
        return;
    }
  }

  private onErrorMessage(cid: number, status: number, req: Header | undefined, message: string): void {
    const reason: FailReason = { kind: 'remote', status, message };
    switch (req?.command) {
      case Cmd.READ_NOTIFY:
      case Cmd.WRITE_NOTIFY:
        take(this.ios, req.param2)?.onFail(reason);
        return;
      case Cmd.EVENT_ADD:
        take(this.subs, req.param2)?.onFail(reason);
        return;
      case Cmd.CREATE_CHAN:
        take(this.channels, req.param1)?.onCreateFailed(status, message);
        return;
      default:
        // An error about a request we cannot match (e.g. a plain WRITE): nothing is waiting.
        void cid;
    }
  }

  /** The circuit is gone: fail every pending operation and subscription. Returns the channels. */
  close(why: FailReason = { kind: 'disconnected' }): CircuitChannel[] {
    if (this.closed) return [];
    this.closed = true;
    const ios = [...this.ios.values()];
    const subs = [...this.subs.values()];
    const chans = [...this.channels.values()];
    this.ios.clear();
    this.subs.clear();
    this.channels.clear();
    for (const io of ios) io.onFail(why);
    for (const s of subs) s.onFail(why);
    return chans;
  }
}

/** Remove and return the entry of `key` (undefined when there is none). */
function take<V>(m: Map<number, V> | IdTable<V>, key: number): V | undefined {
  const v = m.get(key);
  if (v !== undefined) m.delete(key);
  return v;
}
