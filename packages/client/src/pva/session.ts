// The client side of one PV Access connection, sans I/O: connection validation, channel create
// and destroy, operation request ids with their types, their data (decodeUpdate, one routine for
// every reply and update), echo (monitor INITs wait behind cancelled monitors, ./cancel-fence.ts)
// and the bytes to send; receive() takes framed messages, take() gives what to write.
import { BitSet } from './bitset.js';
import { CancelFence } from './cancel-fence.js';
import { CreateQueue } from './create-queue.js';
import { InitWindow } from './init-window.js';
import { Reader, Writer } from './buffer.js';
import { Cmd, Flags, Sub } from './constants.js';
import type { AlignHint } from './framer.js';
import { isBigEndian, type PvaHeader } from './header.js';
import { InternedTypes } from './interned-types.js';
import { decodeMessage, encodeMessage, type EncodeOptions, type Message } from './messages.js';
import { decodeStatus, isSuccess, OK, type Status } from './status.js';
import { scalar, structure, TypeCache, TypeRegistry, type FieldDesc, type StructureDesc } from './types.js';
import { IdTable } from '../wire/id-table.js';
import { decodeInto, decodeUpdate, updateBase, type UpdateBase } from './updates.js';
import type { PvStructure, Typed } from './values.js';
import type { OpHandler, PvaFailReason, SessionChannel, SessionEvents } from './session-contract.js';

export type { OpHandler, PvaFailReason, SessionChannel, SessionEvents } from './session-contract.js';

/** An operation's data (a monitor update, a GET reply, a PUT reply), which data() decodes. */
const isData = (h: PvaHeader): boolean =>
  (h.command === Cmd.MONITOR || h.command === Cmd.GET || h.command === Cmd.PUT) && (h.flags & Flags.CONTROL) === 0;

interface OpEntry {
  handler: OpHandler;
  command: number;
  sid: number;
  /** The data type once INIT succeeded. */
  type: StructureDesc | undefined;
  /** A monitor's fields, the base of its next update. */
  base: UpdateBase | undefined;
  /** The server destroys the request after its reply (an execution with the DESTROY bit). */
  last?: boolean;
  /** A monitor INIT with the pipeline bit. */
  pipelined?: boolean;
}

/** The buffer size and introspection registry size this client announces. */
const CLIENT_BUFFER = 0x10000;
const CLIENT_REGISTRY = 0x7fff;
/** INITs waiting for a slot above which no more channel creates go out. */
const INIT_BACKLOG = 256;
/** pvRequest types an INIT refers to by id once sent (a connection's server keeps them; more go out in full). */
const PVREQUEST_TYPES = 256;

export class ClientSession {
  readonly types = new TypeCache();
  /** Types seen in INIT replies, by their bytes. */
  private readonly interned = new InternedTypes();
  private readonly out = new Writer(true, 4096);
  /** INITs send their pvRequest's type once per connection (0xFD), then its id (0xFE): a snapshot's 10,000 INITs share one. */
  private readonly initEncoding: EncodeOptions = { registry: new TypeRegistry(PVREQUEST_TYPES) };
  private state: 'validating' | 'ready' | 'closed' = 'validating';
  private readonly channels = new Map<number, SessionChannel>();
  /** Channels waiting for validation before their create request goes out. */
  private early: SessionChannel[] = [];
  private readonly ops = new IdTable<OpEntry>();
  private readonly reader = new Reader(new Uint8Array(0), true);
  private nextRequest = 1;
  /** Monitor INITs wait here while the server still writes out monitors just cancelled. */
  private readonly fence = new CancelFence();
  /** The changed fields of the data message being read (handlers use them during the call only). */
  private readonly changed = new BitSet();
  /** INITs wait here while too many are unanswered (./init-window.ts). */
  private readonly inits = new InitWindow();
  /**
   * Monitor STARTs held while channels are set up (creates or INITs waiting): many monitors set
   * up at once (100,000 counters) are all initialised before any of them starts. A started monitor's updates share
   * the server's one thread for the connection with the INITs still to come: QSRV, busy writing
   * 80,000 updates a second, answered the last 20,000 INITs at about 60 a second.
   */
  private heldStarts: number[] = [];

  /** INITs asked about (probeInit), each with the count of echoes sent when its echo went out. */
  private probes: Array<{ id: number; echo: number }> = [];
  /** How the client identified itself in the validation ("x509", "ca" or "anonymous"), once it did. */
  authMethod: string | undefined;
  private readonly ack: Extract<Message, { type: 'MonitorAck' }> = { type: 'MonitorAck', sid: 0, requestId: 0, nfree: 0 };

  constructor(
    private readonly events: SessionEvents,
    private readonly user: string,
    private readonly host: string,
    /** The connection is TLS with a client certificate: identify as "x509" when the server offers it. */
    private readonly x509 = false,
  ) {}

  get ready(): boolean {
    return this.state === 'ready';
  }
  get closed(): boolean {
    return this.state === 'closed';
  }
  get pendingOps(): number {
    return this.ops.size;
  }

  /** The bytes to write (undefined: nothing). */
  take(): Uint8Array | undefined {
    // Creates go out while few INITs wait: names are created, initialised and read as a pipeline,
    // the first ones answered while the later ones are still being created.
    if (this.creates.waiting && this.inits.queuedCount < INIT_BACKLOG)
      for (const channels of this.creates.take()) this.send({ type: 'CreateChannelRequest', channels });
    if (this.fence.takeEcho()) this.send({ type: 'EchoRequest', payload: new Uint8Array(0) });
    return this.out.length ? this.out.take() : undefined;
  }

  private send(m: Message): void {
    if (this.state === 'closed') return;
    const empty = this.out.length === 0;
    encodeMessage(this.out, m, m.type === 'OpInitRequest' ? this.initEncoding : undefined);
    if (empty) this.events.wantFlush();
  }

  /** Append bytes that already form whole messages (a search request over TCP). */
  sendRaw(bytes: Uint8Array): void {
    if (this.state !== 'ready') return;
    const empty = this.out.length === 0;
    this.out.raw(bytes);
    if (empty) this.events.wantFlush();
  }

  /**
   * A message from the server read where it lies, bytes [start, end) of `bytes` (the framer's
   * in-place path: no view of it is made): true when taken, false when it is not operation data
   * (the framer then gives it to receive()).
   */
  receiveAt(h: PvaHeader, bytes: Uint8Array, start: number, end: number): boolean {
    if (this.state === 'closed') return true;
    return isData(h) && this.data(h, bytes, start, end, undefined);
  }

  /** One framed message from the server. */
  receive(h: PvaHeader, payload: Uint8Array, owned?: AlignHint): void {
    if (this.state === 'closed') return;
    if (isData(h)) {
      if (this.data(h, payload, 0, payload.length, owned)) return;
      // A reply to a request already forgotten (destroyed, or failed): nothing to decode it for.
      // (pvxs may write an empty one after failing an INIT.)
      if (payload.length >= 4 && !this.ops.has(new DataView(payload.buffer, payload.byteOffset, 4).getInt32(0, !isBigEndian(h.flags))))
        return;
    }
    // Without `operation`, the generic decoder skips operation data: data() has taken all of it.
    const m = decodeMessage(h, payload, { types: this.types });
    switch (m.type) {
      case 'Invalid':
        return this.events.protocolError(`malformed message (command ${m.command}): ${m.reason}`);
      case 'Unknown':
        return; // a command this client does not handle: skipped
      case 'ControlEchoRequest':
        this.send({ type: 'ControlEchoResponse', data: m.data });
        return;
      case 'SetByteOrder':
      case 'ControlEchoResponse':
      case 'Control':
        return;
      case 'EchoResponse':
        for (const held of this.fence.answered()) this.sendInit(held);
        if (this.probes.length) this.checkProbes();
        return;
      case 'ConnectionValidationRequest':
        return this.validate(m.authMethods);
      case 'ConnectionValidated':
        return this.onValidated(m.status);
      case 'SearchResponse':
        this.events.searchResponse?.(m);
        return;
      case 'CreateChannelResponse':
        return this.onCreateChannel(m.cid, m.sid, m.status);
      case 'DestroyChannelResponse': {
        const ch = this.channels.get(m.cid);
        this.fence.dropChannel(m.sid);
        if (ch) {
          this.channels.delete(m.cid);
          ch.onDestroyed();
        }
        return;
      }
      case 'OpInitResponse':
        return this.onInit(m.requestId, m.status, m.valueType);
      case 'DataResponse': {
        const e = this.ops.get(m.requestId);
        if (e?.last) this.ops.delete(m.requestId);
        e?.handler.onReply?.(m.status, m.value, m.changed, null);
        return;
      }
      case 'OpResponse': {
        const e = this.ops.get(m.requestId);
        if (!e) return;
        if (e.command === Cmd.MONITOR) {
          this.ops.delete(m.requestId);
          e.handler.onFinish?.(m.status);
        } else e.handler.onReply?.(m.status, undefined, undefined, null);
        return;
      }
      case 'RpcResponse': {
        const e = this.ops.get(m.requestId);
        if (!e) return;
        if (e.last) this.ops.delete(m.requestId);
        e.handler.onReply?.(m.status, m.result?.value as PvStructure | undefined, undefined, m.result?.type ?? null);
        return;
      }
      case 'MonitorUpdate':
        return; // an update before the monitor's type is known: nothing to decode it with
      case 'GetFieldResponse': {
        const e = this.ops.get(m.requestId);
        if (!e) return;
        this.ops.delete(m.requestId);
        e.handler.onReply?.(m.status, undefined, undefined, m.valueType);
        return;
      }
      case 'ServerMessage':
      case 'AclChange':
      case 'Beacon':
        return;
      default:
        return this.events.protocolError(`unexpected ${m.type} from the server`);
    }
  }

  /**
   * The one data path of the client: monitor updates, GET replies and PUT get-backs, each decoded
   * into a new structure that holds every field of the type: the server's where it marked them,
   * else the monitor's (its UpdateBase) or the type's default (decodeUpdate).
   * False when the message is not data of an initialised operation (the generic decoder takes it).
   */
  private data(h: PvaHeader, bytes: Uint8Array, start: number, end: number, owned: AlignHint | undefined): boolean {
    if (end - start < 5) return false;
    // One reader for every message's data: it is done with before a handler runs.
    const r = this.reader.reset(bytes, !isBigEndian(h.flags), start, end);
    r.owned = owned;
    const id = r.i32();
    const e = this.ops.get(id);
    if (!e || e.command !== h.command) return false;
    const sub = r.u8();
    if (sub & Sub.INIT) return this.initReply(r, id);
    const type = e.type;
    const monitor = h.command === Cmd.MONITOR;
    // A monitor's DESTROY or PROCESS bit is its end; a PUT's reply carries data only for a get-back
    // (GET bit); a GET's DESTROY bit only echoes the request's.
    if (!type || (monitor && (sub & (Sub.DESTROY | Sub.PROCESS)) !== 0) || (h.command === Cmd.PUT && (sub & Sub.GET) === 0)) return false;
    let changed: BitSet, overrun: BitSet | undefined;
    let value: PvStructure;
    if (e.last) this.ops.delete(id);
    try {
      const status = monitor ? OK : decodeStatus(r);
      if (!isSuccess(status)) {
        e.handler.onReply?.(status, undefined, undefined, null);
        return true;
      }
      changed = BitSet.decode(r, this.changed);
      value = monitor
        ? decodeInto(r, type, (e.base ??= updateBase(type)), changed, this.types)
        : decodeUpdate(r, type, undefined, changed, this.types);
      // An empty overrun set (the usual) is not made into an object.
      if (monitor && r.remaining > 0 && r.bytes[r.pos] === 0) r.pos++;
      else if (monitor) overrun = BitSet.decode(r);
    } catch (err) {
      this.events.protocolError(
        `malformed ${monitor ? 'monitor update' : h.command === Cmd.GET ? 'GET reply' : 'PUT get-back'}: ${(err as Error).message}`,
      );
      return true;
    }
    if (monitor) {
      e.handler.onUpdate?.(value, changed, overrun);
    } else e.handler.onReply?.(OK, value, changed, null);
    return true;
  }

  /**
   * An INIT reply whose type is written out in full: the same bytes give the same type object,
   * decoded once. False for anything else (the generic decoder takes it).
   */
  private initReply(r: Reader, id: number): boolean {
    let status: Status;
    try {
      status = decodeStatus(r);
    } catch {
      return false;
    }
    if (!isSuccess(status)) return false;
    let type: FieldDesc | undefined;
    try {
      type = this.interned.read(r, this.types);
    } catch (err) {
      this.events.protocolError(`malformed INIT reply: ${(err as Error).message}`);
      return true;
    }
    if (!type) return false;
    this.onInit(id, status, type);
    return true;
  }

  private validate(methods: string[]): void {
    // x509 (the TLS client certificate names the client) where the server offers it, else ca.
    const method = this.x509 && methods.includes('x509') ? 'x509' : methods.includes('ca') ? 'ca' : 'anonymous';
    const authData: Typed | null =
      method === 'ca'
        ? { type: structure('', { user: scalar('string'), host: scalar('string') }), value: { user: this.user, host: this.host } }
        : null;
    this.authMethod = method;
    this.send({
      type: 'ConnectionValidationResponse',
      bufferSize: CLIENT_BUFFER,
      registrySize: CLIENT_REGISTRY,
      qos: 0,
      authMethod: method,
      authData,
    });
  }

  private onValidated(status: Status): void {
    if (this.state !== 'validating') return;
    if (!isSuccess(status)) {
      this.events.validated(status);
      return;
    }
    this.state = 'ready';
    const early = this.early;
    this.early = [];
    for (const ch of early) this.sendCreate(ch);
    this.events.validated(status);
  }

  // ---- channels ----

  createChannel(ch: SessionChannel): void {
    if (this.state === 'closed') return;
    this.channels.set(ch.cid, ch);
    if (this.state === 'ready') this.sendCreate(ch);
    else this.early.push(ch);
  }

  /** Creates wait here until the end of the turn's writes, and while too many are unanswered. */
  private readonly creates = new CreateQueue();

  private sendCreate(ch: SessionChannel): void {
    if (!this.creates.waiting) this.events.wantFlush();
    this.creates.push({ id: ch.cid, name: ch.name });
  }

  private onCreateChannel(cid: number, sid: number, status: Status): void {
    if (this.creates.answered()) this.events.wantFlush();
    else this.releaseStarts();
    const ch = this.channels.get(cid);
    if (!ch) {
      // A channel forgotten while its create was in flight: destroy it on the server too.
      if (isSuccess(status)) this.send({ type: 'DestroyChannelRequest', sid, cid });
      return;
    }
    if (isSuccess(status)) ch.onCreated(sid);
    else {
      this.channels.delete(cid);
      ch.onCreateFailed(status);
    }
  }

  /** Forget a channel; with its sid (it was created), the server destroys it too. */
  destroyChannel(ch: SessionChannel, sid?: number): void {
    if (this.channels.get(ch.cid) !== ch) return;
    this.channels.delete(ch.cid);
    const i = this.early.indexOf(ch);
    if (i >= 0) this.early.splice(i, 1);
    if (sid === undefined) return;
    this.fence.dropChannel(sid);
    if (this.state === 'ready') this.send({ type: 'DestroyChannelRequest', sid, cid: ch.cid });
  }

  // ---- operations ----

  private newRequest(handler: OpHandler, command: number, sid: number): number {
    let id = this.nextRequest;
    while (this.ops.has(id)) id = (id + 1) >>> 0 || 1;
    this.nextRequest = (id + 1) >>> 0 || 1;
    // Every field set at once: 100,000 monitors' entries stay small.
    this.ops.set(id, { handler, command, sid, type: undefined, base: undefined, last: false, pipelined: false });
    return id;
  }

  /** INIT of a GET, PUT or MONITOR (a MONITOR's may wait behind monitors just cancelled); returns its request id. */
  init(command: number, sid: number, pvRequest: Typed, handler: OpHandler, queueSize?: number): number {
    const id = this.newRequest(handler, command, sid);
    const pipeline = command === Cmd.MONITOR && queueSize !== undefined;
    if (pipeline) this.ops.get(id)!.pipelined = true;
    const m: Message = {
      type: 'OpInitRequest',
      command,
      sid,
      requestId: id,
      subcommand: Sub.INIT | (pipeline ? Sub.PIPELINE : 0),
      pvRequest,
      ...(pipeline ? { queueSize } : {}),
    };
    if (command === Cmd.MONITOR && this.fence.closed) this.fence.hold(id, sid, m);
    else this.sendInit(m);
    return id;
  }

  /** An INIT goes out if the window allows, or waits for an earlier one's reply. */
  private sendInit(m: Message): void {
    if (m.type !== 'OpInitRequest' || this.inits.admit(m.requestId, m)) this.send(m);
  }

  /** INIT `id` is answered or forgotten: the INITs waiting for its slot go out, then the creates or the STARTs held. */
  private initDone(id: number): void {
    for (const m of this.inits.release(id)) this.send(m);
    this.backlogShrank();
  }

  /** Fewer INITs wait: the creates held behind them may go, or, with none waiting, the STARTs held. */
  private backlogShrank(): void {
    if (!this.creates.waiting) this.releaseStarts();
    else if (this.inits.queuedCount < INIT_BACKLOG) this.events.wantFlush();
  }

  /** Whether channels are still being set up here: creates or INITs waiting. */
  private get settingUp(): boolean {
    return this.creates.waiting || this.inits.queuedCount > 0;
  }

  /** The STARTs held while channels were set up, once they are. */
  private releaseStarts(): void {
    if (this.heldStarts.length === 0 || this.settingUp) return;
    const held = this.heldStarts;
    this.heldStarts = [];
    for (const h of held) this.monitorStart(h);
  }

  private onInit(id: number, status: Status, type: FieldDesc | null): void {
    const e = this.ops.get(id);
    if (!e) return;
    this.initDone(id);
    if (isSuccess(status) && type?.kind === 'structure') e.type = type;
    // An RPC's INIT reply has no type: each reply carries its own.
    else if (isSuccess(status) && e.command !== Cmd.PUT && e.command !== Cmd.RPC) {
      this.ops.delete(id);
      e.handler.onFail({ kind: 'protocol', message: `INIT reply without a structure type (command ${e.command})` });
      return;
    } else if (!isSuccess(status)) this.ops.delete(id);
    e.handler.onInit?.(status, type);
  }

  /** The data type of an initialised operation. */
  typeOf(id: number): StructureDesc | undefined {
    return this.ops.get(id)?.type;
  }

  /** GET execution (the reply goes to onReply); `last`: the server destroys the request after replying. */
  get(id: number, last = false): void {
    const e = this.ops.get(id);
    if (!e) return;
    e.last = last;
    this.send({ type: 'OpRequest', command: Cmd.GET, sid: e.sid, requestId: id, subcommand: last ? Sub.DESTROY : Sub.EXEC });
  }

  /** RPC execution with its argument (the reply goes to onReply: the result's value and type); `last` as get's. */
  rpc(id: number, argument: Typed | null, last = false): void {
    const e = this.ops.get(id);
    if (!e) return;
    e.last = last;
    this.send({ type: 'RpcRequest', sid: e.sid, requestId: id, subcommand: last ? Sub.DESTROY : Sub.EXEC, argument });
  }

  /** Hand an initialised request to another handler (a PUT request kept for the next put). */
  rebind(id: number, handler: OpHandler): boolean {
    const e = this.ops.get(id);
    if (!e?.type) return false;
    e.handler = handler;
    return true;
  }

  /** PUT execution of the fields `changed` selects from `value`. */
  put(id: number, changed: BitSet, value: PvStructure): void {
    const e = this.ops.get(id);
    if (!e?.type) return;
    this.send({ type: 'PutRequest', sid: e.sid, requestId: id, subcommand: Sub.EXEC, changed, valueType: e.type, value });
  }

  /** A PUT's get-back: the current value, before putting (the reply goes to onReply). */
  putGet(id: number): void {
    const e = this.ops.get(id);
    if (e) this.send({ type: 'OpRequest', command: Cmd.PUT, sid: e.sid, requestId: id, subcommand: Sub.GET });
  }

  /** Start (or stop) a monitor's updates; a START waits while channels are being set up. */
  monitorStart(id: number, start = true): void {
    const e = this.ops.get(id);
    if (!e) return;
    if (start && this.settingUp) {
      this.heldStarts.push(id);
      return;
    }
    if (!start) {
      const i = this.heldStarts.indexOf(id);
      if (i >= 0) {
        this.heldStarts.splice(i, 1);
        return;
      }
    }
    this.send({ type: 'OpRequest', command: Cmd.MONITOR, sid: e.sid, requestId: id, subcommand: start ? Sub.START : Sub.STOP });
  }

  /** Tell a pipelined monitor's server that `nfree` more updates may come. */
  monitorAck(id: number, nfree: number): void {
    const e = this.ops.get(id);
    if (!e) return;
    // One message object for every ack (100,000 monitors send thousands a second): encoded at once.
    const ack = this.ack;
    ack.sid = e.sid;
    ack.requestId = id;
    ack.nfree = nfree;
    this.send(ack);
  }

  /** GET_FIELD: the type of the channel (or of one field). */
  getField(sid: number, field: string, handler: OpHandler): number {
    const id = this.newRequest(handler, Cmd.GET_FIELD, sid);
    this.send({ type: 'GetFieldRequest', sid, requestId: id, field });
    return id;
  }

  /**
   * Forget a request; the server is told to destroy it (a late reply is ignored). A started
   * monitor's cancel holds the next monitor INITs until the server has written out its updates.
   */
  destroy(id: number): void {
    const e = this.ops.get(id);
    if (!e) return;
    this.ops.delete(id);
    // Held behind the fence or waiting for a slot, its INIT never went out: nothing to tell the server.
    if (this.fence.drop(id)) return;
    if (!e.type && this.inits.unqueue(id)) return this.backlogShrank();
    if (!e.type) this.initDone(id);
    if (e.command === Cmd.GET_FIELD || this.state !== 'ready') return;
    this.send({ type: 'DestroyRequest', sid: e.sid, requestId: id });
    if (e.command === Cmd.MONITOR && e.type) this.fence.cancelled();
  }

  /**
   * Find out whether the server ignored INIT `id` (sent, not answered): an echo goes out after it,
   * and if the echo's reply comes first the handler's onInitIgnored runs (a server answers a
   * connection's requests in order). False when the INIT has not gone out (ask again later).
   */
  probeInit(id: number): boolean {
    const e = this.ops.get(id);
    if (!e || e.type || this.state !== 'ready' || !this.inits.sent(id)) return false;
    this.send({ type: 'EchoRequest', payload: new Uint8Array(0) });
    this.fence.echoSent();
    this.probes.push({ id, echo: this.fence.echoes.sent });
    return true;
  }

  private checkProbes(): void {
    const answered = this.fence.echoes.answered;
    const due = this.probes.filter((p) => p.echo <= answered);
    this.probes = this.probes.filter((p) => p.echo > answered);
    if (
      !due.some((p) => {
        const e = this.ops.get(p.id);
        return e !== undefined && !e.type;
      })
    )
      return;
    // One pipelined INIT ignored: the server ignores them all. Every monitor still waiting for its
    // INIT's reply hears it now, not each from its own probe (a window of INITs at a time). The
    // latest first: one still queued is taken out of the queue without releasing a slot, so the
    // earlier ones' slots go to the plain INITs that replace them.
    const waiting = [...this.ops.entries()].filter(([, e]) => e.pipelined && !e.type).sort(([a], [b]) => b - a);
    this.probes = [];
    for (const [id, e] of waiting) if (this.ops.get(id) === e) e.handler.onInitIgnored?.();
  }

  /** Application-level echo (the connection watchdog). */
  echo(): void {
    if (this.state === 'ready') {
      this.send({ type: 'EchoRequest', payload: new Uint8Array(0) });
      this.fence.echoSent();
    } else this.send({ type: 'ControlEchoRequest', data: 0 });
  }

  /** The connection is gone: fail every operation; returns the channels it carried. */
  close(reason: PvaFailReason): SessionChannel[] {
    if (this.state === 'closed') return [];
    this.state = 'closed';
    const ops = [...this.ops.values()];
    this.ops.clear();
    for (const e of ops) e.handler.onFail(reason);
    const chans = [...this.channels.values()];
    this.channels.clear();
    this.early = [];
    this.creates.clear();
    this.fence.clear();
    this.inits.clear();
    this.heldStarts = [];
    return chans;
  }
}
