// The server side of one PV Access connection, without I/O: framed messages in (decoded by the
// client's own codecs, src/pva/messages.ts), messages out. Connection validation, searches over
// TCP, channels, GET_FIELD, GET, PUT (through the PV's put handler), MONITOR with pipelining
// (a window of updates the client acknowledges; the latest update waits while it is closed) and
// RPC (through the channel's handler). A channel serves a CA PV as its normative type, or a structure.
import { BitSet } from '../../pva/bitset.js';
import { Cmd, StatusType } from '../../pva/constants.js';
import type { PvaHeader } from '../../pva/header.js';
import type { Message } from '../../pva/message-types.js';
import { decodeMessage, encodeMessage } from '../../pva/messages.js';
import { Writer } from '../../pva/buffer.js';
import { monitorOptions } from '../../pva/pvrequest.js';
import { OK, type Status } from '../../pva/status.js';
import { bitCount, bitOffset, TypeCache, type StructureDesc } from '../../pva/types.js';
import type { PvStructure } from '../../pva/values.js';
import { putData } from '../../pva/fields.js';
import { CHANGE_ALARM, CHANGE_GONE, CHANGE_VALUE, ServedPv, type Caller, type ServedValue } from '../pv.js';
import { ServedStructure, type RpcResult } from '../structure.js';
import { typedOf } from '../../pva/infer.js';
import { ntTypeOf, ntValueOf, selectFields, valueFromNt } from './nt.js';

/** What a PV Access channel serves: a CA PV (as its normative type) or a structure (or an RPC service). */
export type PvaServed = ServedPv | ServedStructure;

/** The names a PV Access server serves. */
export interface PvaProvider {
  findPva(name: string): PvaServed | undefined;
}

/** The type a channel's GET, PUT and MONITOR see (undefined: an RPC service). */
const servedType = (pv: PvaServed): StructureDesc | undefined => (pv instanceof ServedPv ? ntTypeOf(pv) : pv.type);
const servedValue = (pv: PvaServed): PvStructure => (pv instanceof ServedPv ? ntValueOf(pv) : pv.value);

export interface PvaCircuitEvents {
  wantFlush(): void;
}

interface Channel {
  sid: number;
  cid: number;
  pv: PvaServed;
  ops: Set<number>;
  unlisten: () => void;
}

interface Op {
  command: number;
  channel: Channel;
  /** The data type (selected fields); none for RPC. */
  type?: StructureDesc;
  /**
   * MONITOR: started, the updates the client may still take (undefined: not pipelined), and what
   * changed since the last update: every field (the first), a CA PV's change bits, a structure's paths.
   */
  started?: boolean;
  window?: number;
  all?: boolean;
  changes?: number;
  paths?: Set<string>;
  /** The bits of a CA PV's value, alarm and timeStamp in the request's type (where selected). */
  bits?: { value: number | undefined; alarm: number | undefined; timeStamp: number | undefined };
  unsubscribe?: () => void;
}

const SUB_INIT = 0x08;
const SUB_DESTROY = 0x10;
const SUB_GET = 0x40;
const SUB_START = 0x44;
const SUB_STOP = 0x04;

const error = (message: string): Status => ({ type: StatusType.ERROR, message, callTree: '' });

export class PvaServerCircuit {
  /** Posted arrays are written from the app's memory, not copied (ServedPv: a posted value is not changed after). */
  private readonly out = new Writer(true, 1024, true);
  private readonly clientTypes = new TypeCache();
  private readonly channels = new Map<number, Channel>();
  private readonly ops = new Map<number, Op>();
  private nextSid = 1;
  private closed = false;
  /** The socket's unsent bytes are past the limit: updates wait (the latest changes of each monitor), in `held`. */
  private blocked = false;
  private readonly held = new Set<number>();
  readonly peer: Caller;

  constructor(
    private readonly provider: PvaProvider,
    private readonly events: PvaCircuitEvents,
    address: string,
    private readonly opts: {
      port: number;
      guid: Uint8Array;
      /** The server's address in search replies, IPv4-mapped (::ffff:0.0.0.0 where it serves every interface: the client uses the reply's source). */
      address: Uint8Array;
      /** The server's TLS port, for searches over TCP that offer "tls". */
      tlsPort?: number;
      /** A TLS connection: the common name of the client's certificate, when TLS verified one. */
      tls?: { certName: string | undefined };
    },
  ) {
    this.peer = { address, host: address, user: '', tls: opts.tls !== undefined };
    this.send({ type: 'SetByteOrder', bigEndian: false });
    // "x509" where TLS verified a client certificate: the client is then known by its name.
    const methods = opts.tls?.certName !== undefined ? ['x509', 'ca', 'anonymous'] : ['ca', 'anonymous'];
    this.send({ type: 'ConnectionValidationRequest', bufferSize: 0x10000, registrySize: 0x7fff, authMethods: methods });
  }

  /** What to write, in order (large arrays as they are), or undefined. */
  take(): Uint8Array[] | undefined {
    return this.out.length ? this.out.takeChunks() : undefined;
  }

  /**
   * The socket's unsent bytes passed the limit (true) or drained (false): meanwhile each monitor
   * keeps only its latest changes, encoded when the socket takes more, so that a client that stops
   * reading holds nothing but its monitors' state here and the other circuits are not affected.
   */
  setBlocked(on: boolean): void {
    if (this.blocked === on) return;
    this.blocked = on;
    if (on) return;
    const held = [...this.held];
    this.held.clear();
    for (const id of held) {
      const op = this.ops.get(id);
      if (op?.started) this.update(id, op);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of [...this.channels.values()]) this.dropChannel(ch);
  }

  private send(m: Message): void {
    if (this.closed) return;
    const empty = this.out.length === 0;
    encodeMessage(this.out, m);
    if (empty) this.events.wantFlush();
  }

  /** One framed message from the client; false when it cannot be decoded (the caller closes the connection). */
  receive(h: PvaHeader, payload: Uint8Array): boolean {
    if (this.closed) return true;
    const m = decodeMessage(h, payload, {
      types: this.clientTypes,
      operation: (id) => {
        const op = this.ops.get(id);
        return op?.type ? { type: op.type } : undefined;
      },
    });
    switch (m.type) {
      case 'Invalid':
        return false;
      case 'ConnectionValidationResponse': {
        const auth = m.authData?.value as { user?: string; host?: string } | undefined;
        this.peer.method = m.authMethod || 'anonymous';
        if (m.authMethod === 'x509') {
          const name = this.opts.tls?.certName;
          if (name === undefined) {
            this.send({ type: 'ConnectionValidated', status: error('x509 needs a client certificate TLS verified') });
            return true;
          }
          this.peer.user = name;
        } else if (m.authMethod === 'ca' && typeof auth?.user === 'string') this.peer.user = auth.user;
        if (typeof auth?.host === 'string') this.peer.host = auth.host;
        this.send({ type: 'ConnectionValidated', status: OK });
        return true;
      }
      case 'EchoRequest':
        this.send({ type: 'EchoResponse', payload: m.payload });
        return true;
      case 'SearchRequest': {
        const ids = m.channels.filter((c) => this.provider.findPva(c.name)).map((c) => c.id);
        const tls = this.opts.tlsPort !== undefined && m.protocols.includes('tls');
        if (ids.length)
          this.send({
            type: 'SearchResponse',
            guid: this.opts.guid,
            sequenceId: m.sequenceId,
            address: this.opts.address,
            port: tls ? this.opts.tlsPort! : this.opts.port,
            protocol: tls ? 'tls' : 'tcp',
            found: true,
            ids,
          });
        return true;
      }
      case 'CreateChannelRequest':
        for (const c of m.channels) this.create(c.name, c.id);
        return true;
      case 'DestroyChannelRequest': {
        const ch = this.channels.get(m.sid);
        if (ch) this.dropChannel(ch);
        this.send({ type: 'DestroyChannelResponse', sid: m.sid, cid: m.cid });
        return true;
      }
      case 'GetFieldRequest': {
        const ch = this.channels.get(m.sid);
        const type = ch && servedType(ch.pv);
        this.send({
          type: 'GetFieldResponse',
          requestId: m.requestId,
          status: type ? OK : error(ch ? `${ch.pv.name} serves RPC only` : 'no such channel'),
          valueType: type ?? null,
        });
        return true;
      }
      case 'OpInitRequest':
        this.init(m.command, m.sid, m.requestId, m.pvRequest, m.queueSize);
        return true;
      case 'OpRequest':
        // A PUT with the GET bit fetches the present value (pvxs does, before it builds the put).
        if (m.command === Cmd.PUT) this.put(m.requestId, m.subcommand, new BitSet(), undefined);
        else this.execute(m.command, m.requestId, m.subcommand);
        return true;
      case 'PutRequest':
        this.put(m.requestId, m.subcommand, m.changed, m.value);
        return true;
      case 'RpcRequest':
        this.rpc(m.requestId, m.subcommand, m.argument);
        return true;
      case 'MonitorAck': {
        const op = this.ops.get(m.requestId);
        if (op?.window !== undefined) {
          op.window += m.nfree;
          if (op.started) this.update(m.requestId, op);
        }
        return true;
      }
      case 'DestroyRequest':
      case 'CancelRequest':
        this.dropOp(m.requestId);
        return true;
      default:
        return true;
    }
  }

  private create(name: string, cid: number): void {
    const pv = this.provider.findPva(name);
    if (!pv) {
      this.send({ type: 'CreateChannelResponse', cid, sid: 0, status: error(`no such channel: ${name}`) });
      return;
    }
    const sid = this.nextSid++;
    const ch: Channel = { sid, cid, pv, ops: new Set(), unlisten: () => {} };
    ch.unlisten = pv.subscribe((_pv: unknown, changes: number) => {
      if (changes & CHANGE_GONE) {
        this.dropChannel(ch);
        this.send({ type: 'DestroyChannelResponse', sid, cid });
      }
    });
    this.channels.set(sid, ch);
    this.send({ type: 'CreateChannelResponse', cid, sid, status: OK });
  }

  private dropChannel(ch: Channel): void {
    for (const id of [...ch.ops]) this.dropOp(id);
    ch.unlisten();
    this.channels.delete(ch.sid);
  }

  private dropOp(id: number): void {
    const op = this.ops.get(id);
    if (!op) return;
    op.unsubscribe?.();
    op.channel.ops.delete(id);
    this.ops.delete(id);
  }

  private init(
    command: number,
    sid: number,
    requestId: number,
    pvRequest: { type: unknown; value: unknown } | null,
    queueSize: number | undefined,
  ): void {
    const ch = this.channels.get(sid);
    const reply = (status: Status, type: StructureDesc | null) =>
      this.send({ type: 'OpInitResponse', command, requestId, subcommand: SUB_INIT, status, valueType: type });
    if (!ch) return reply(error('no such channel'), null);
    if (command === Cmd.RPC) {
      if (!(ch.pv instanceof ServedStructure && ch.pv.onRpc)) return reply(error(`${ch.pv.name} serves no RPC`), null);
      this.ops.set(requestId, { command, channel: ch });
      ch.ops.add(requestId);
      return reply(OK, null);
    }
    if (command !== Cmd.GET && command !== Cmd.PUT && command !== Cmd.MONITOR) return reply(error(`command ${command} not served`), null);
    const whole = servedType(ch.pv);
    if (!whole) return reply(error(`${ch.pv.name} serves RPC only`), null);
    if (ch.pv.accessFor(this.peer) === 'none') return reply(error('read access denied'), null);
    const field = (pvRequest?.value as { field?: unknown } | undefined)?.field;
    const type = selectFields(whole, field);
    if (!type) return reply(error('Empty field selection'), null);
    const op: Op = { command, channel: ch, type };
    if (command === Cmd.MONITOR) {
      const pipelined = pvRequest ? monitorOptions(pvRequest as never).pipeline : false;
      if (pipelined) op.window = Math.max(1, queueSize ?? 4);
    }
    this.ops.set(requestId, op);
    ch.ops.add(requestId);
    reply(OK, type);
  }

  private execute(command: number, requestId: number, sub: number): void {
    const op = this.ops.get(requestId);
    if (!op) return;
    if (command === Cmd.GET) {
      this.send({
        type: 'DataResponse',
        command: Cmd.GET,
        requestId,
        subcommand: sub & SUB_DESTROY,
        status: OK,
        changed: BitSet.of(0),
        valueType: op.type,
        value: servedValue(op.channel.pv),
      });
      if (sub & SUB_DESTROY) this.dropOp(requestId);
      return;
    }
    if (command === Cmd.MONITOR) {
      if (sub === SUB_START && !op.started) {
        op.started = true;
        op.all = true; // the first update: every field
        op.unsubscribe ??= op.channel.pv.subscribe((_pv: unknown, changes: number, paths?: readonly string[]) => {
          if ((changes & (CHANGE_VALUE | CHANGE_ALARM)) === 0) return;
          if (paths) for (const p of paths) (op.paths ??= new Set()).add(p);
          else op.changes = (op.changes ?? 0) | changes;
          if (op.started) this.update(requestId, op);
        });
        this.update(requestId, op);
      } else if (sub === SUB_STOP) op.started = false;
      if (sub & SUB_DESTROY) this.dropOp(requestId);
    }
  }

  /** The pending changes of a started monitor as one update, if its window is open. */
  private update(requestId: number, op: Op): void {
    if (!(op.all || op.changes || op.paths?.size) || (op.window !== undefined && op.window <= 0)) return;
    if (this.blocked) {
      this.held.add(requestId);
      return;
    }
    const type = op.type!;
    const changed = op.all ? BitSet.of(0) : new BitSet();
    if (!op.all) {
      // The fields of the request's selection that changed (none: no update).
      if (op.changes) {
        const b = (op.bits ??= {
          value: bitOffset(type, 'value'),
          alarm: bitOffset(type, 'alarm'),
          timeStamp: bitOffset(type, 'timeStamp'),
        });
        if (op.changes & CHANGE_VALUE && b.value !== undefined) changed.set(b.value);
        if (op.changes & CHANGE_ALARM && b.alarm !== undefined) changed.set(b.alarm);
        if (b.timeStamp !== undefined) changed.set(b.timeStamp);
      }
      if (op.paths)
        for (const name of op.paths) {
          const bit = bitOffset(type, name);
          if (bit !== undefined) changed.set(bit);
        }
    }
    op.all = false;
    op.changes = 0;
    op.paths?.clear();
    if (changed.isEmpty()) return;
    if (op.window !== undefined) op.window--;
    this.send({ type: 'MonitorUpdate', requestId, subcommand: 0, changed, valueType: type, value: servedValue(op.channel.pv) });
  }

  private put(requestId: number, sub: number, changed: BitSet, value: PvStructure | undefined): void {
    const op = this.ops.get(requestId);
    if (!op) return;
    const done = (status: Status) => {
      this.send({ type: 'OpResponse', command: Cmd.PUT, requestId, subcommand: sub, status });
      if (sub & SUB_DESTROY) this.dropOp(requestId);
    };
    const type = op.type!;
    if (sub & SUB_GET) {
      this.send({
        type: 'DataResponse',
        command: Cmd.PUT,
        requestId,
        subcommand: sub,
        status: OK,
        changed: BitSet.of(0),
        valueType: type,
        value: servedValue(op.channel.pv),
      });
      return;
    }
    const pv = op.channel.pv;
    if (pv.accessFor(this.peer) !== 'write') return done(error('put not allowed'));
    if (pv instanceof ServedStructure) return this.putStructure(pv, type, changed, value, done);
    const valueBit = bitOffset(type, 'value');
    if (!value || valueBit === undefined || !(changed.get(0) || changed.get(valueBit) || changed.anyIn(valueBit, valueBit + 3)))
      return done(OK);
    let v: ServedValue;
    try {
      v = valueFromNt(pv, value.value);
    } catch (e) {
      return done(error((e as Error).message));
    }
    putThrough(
      pv.onPut,
      () => ({ value: v, peer: { ...this.peer } }),
      (o) => pv.post((o?.accept ? o.value : undefined) ?? v),
      done,
    );
  }

  /** A put to a structure: the fields the client marked, on the structure's present value, through its handler. */
  private putStructure(
    pv: ServedStructure,
    type: StructureDesc,
    changed: BitSet,
    value: PvStructure | undefined,
    done: (s: Status) => void,
  ): void {
    const paths = value ? changedPaths(type, changed) : [];
    if (!paths.length) return done(OK);
    const fields: Record<string, unknown> = {};
    for (const p of paths) fields[p] = p.split('.').reduce<unknown>((o, k) => (o as PvStructure)[k], value);
    let merged: PvStructure;
    try {
      merged = putData(pv.type!, fields as never, undefined, pv.value).value;
    } catch (e) {
      return done(error((e as Error).message));
    }
    putThrough(
      pv.onPut,
      () => ({ value: merged, changed: paths, peer: { ...this.peer } }),
      (o) => pv.post((o?.accept ? o.fields : undefined) ?? fields),
      done,
    );
  }

  /** An RPC call: the handler's result (or its error) is the reply. */
  private rpc(requestId: number, sub: number, argument: { type: unknown; value: unknown } | null): void {
    const op = this.ops.get(requestId);
    if (!op || op.command !== Cmd.RPC) return;
    const pv = op.channel.pv as ServedStructure;
    const reply = (status: Status, result: RpcResult) => {
      let typed = null;
      if (result !== undefined)
        try {
          typed = typedOf(result);
        } catch (e) {
          status = error(`bad RPC result: ${(e as Error).message}`);
        }
      this.send({ type: 'RpcResponse', requestId, subcommand: sub, status, result: typed });
      if (sub & SUB_DESTROY) this.dropOp(requestId);
    };
    settle(
      () => pv.onRpc!({ argument: argument as never, peer: { ...this.peer } }),
      (result) => reply(OK, result),
      (status) => reply(status, undefined),
    );
  }
}

/**
 * A put through the app's handler, if there is one: refused with the handler's message, or posted
 * (`post` is given the handler's outcome, which may name what to post instead); then the reply.
 */
function putThrough<R, O extends { accept: true } | { accept: false; message: string }>(
  handler: ((request: R) => O | Promise<O> | void | Promise<void>) | undefined,
  request: () => R,
  post: (outcome: O | undefined) => void,
  done: (s: Status) => void,
): void {
  if (!handler) {
    post(undefined);
    return done(OK);
  }
  settle(
    () => handler(request()),
    (outcome) => {
      if (outcome && !outcome.accept) return done(error(outcome.message));
      post(outcome || undefined);
      done(OK);
    },
    done,
  );
}

/** Run an app's handler (sync or async): its result to `ok`, a throw or rejection to `fail` as an error status. */
function settle<T>(run: () => T | Promise<T>, ok: (v: T) => void, fail: (s: Status) => void): void {
  Promise.resolve()
    .then(run)
    .then(ok, (e: unknown) => fail(error(e instanceof Error ? e.message : String(e))));
}

/** The fields a put marks, by path: a marked structure whole, else its marked members. */
function changedPaths(type: StructureDesc, bits: BitSet): string[] {
  const out: string[] = [];
  if (bits.get(0)) return type.fields.map((f) => f.name);
  const walk = (t: StructureDesc, at: number, prefix: string): void => {
    let bit = at + 1;
    for (const f of t.fields) {
      const n = f.type.kind === 'structure' ? bitCount(f.type) : 1;
      if (bits.get(bit)) out.push(prefix + f.name);
      else if (f.type.kind === 'structure' && bits.anyIn(bit, bit + n)) walk(f.type, bit, `${prefix}${f.name}.`);
      bit += n;
    }
  };
  walk(type, 0, '');
  return out;
}
