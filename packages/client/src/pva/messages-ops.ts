// Operation messages: GET, PUT, MONITOR (INIT with pvRequest, execution, data replies with
// bitsets, monitor updates and acks), RPC (an argument and a result, each a whole typed value),
// GET_FIELD, destroy and cancel of a request.
import { BitSet } from './bitset.js';
import type { Reader, Writer } from './buffer.js';
import { Cmd, Sub } from './constants.js';
import type { PvaHeader } from './header.js';
import type { DecodeContext, EncodeOptions, Message, Operation, RequestMessage, ResponseMessage } from './message-types.js';
import { decodeTyped, encodeTyped } from './messages-session.js';
import { decodeStatus, encodeStatus, isSuccess, OK } from './status.js';
import { decodeType, encodeType, type StructureDesc } from './types.js';
import { decodeUpdate } from './updates.js';
import { encodePartial, type PvStructure } from './values.js';

const OPS = new Set<number>([Cmd.GET, Cmd.PUT, Cmd.MONITOR, Cmd.PROCESS, Cmd.RPC, Cmd.PUT_GET, Cmd.ARRAY]);

/**
 * The bitset and the selected fields, decoded as the client session decodes its data
 * (decodeUpdate): a new value, on the operation's last value when it has one (left unchanged).
 */
function readData(
  r: Reader,
  op: Operation | undefined,
  ctx: DecodeContext,
): { changed: BitSet; valueType?: StructureDesc; value?: PvStructure } {
  const changed = BitSet.decode(r);
  if (!op) {
    r.pos = r.end; // data of a request this side no longer tracks: skipped
    return { changed };
  }
  return { changed, valueType: op.type, value: decodeUpdate(r, op.type, op.value, changed, ctx.types) };
}

export function decodeOpRequest(r: Reader, h: PvaHeader, ctx: DecodeContext): RequestMessage | undefined {
  switch (h.command) {
    case Cmd.GET_FIELD:
      return { type: 'GetFieldRequest', sid: r.i32(), requestId: r.i32(), field: r.string() };
    case Cmd.DESTROY_REQUEST:
      return { type: 'DestroyRequest', sid: r.i32(), requestId: r.i32() };
    case Cmd.CANCEL_REQUEST:
      return { type: 'CancelRequest', sid: r.i32(), requestId: r.i32() };
  }
  if (!OPS.has(h.command)) return undefined;
  const sid = r.i32(),
    requestId = r.i32(),
    subcommand = r.u8();
  const command = h.command;
  if (subcommand & Sub.INIT) {
    const pvRequest = decodeTyped(r, ctx);
    if (command === Cmd.MONITOR && subcommand & Sub.PIPELINE && r.remaining >= 4) {
      return { type: 'OpInitRequest', command, sid, requestId, subcommand, pvRequest, queueSize: r.i32() };
    }
    return { type: 'OpInitRequest', command, sid, requestId, subcommand, pvRequest };
  }
  if (command === Cmd.MONITOR && subcommand & Sub.PIPELINE) return { type: 'MonitorAck', sid, requestId, nfree: r.i32() };
  if (command === Cmd.RPC)
    return { type: 'RpcRequest', sid, requestId, subcommand, argument: r.remaining > 0 ? decodeTyped(r, ctx) : null };
  // A put's data, also with DESTROY (a last put, as core-pva sends one: put and destroy in one).
  if (command === Cmd.PUT && !(subcommand & Sub.GET) && (!(subcommand & Sub.DESTROY) || r.remaining > 0)) {
    return { type: 'PutRequest', sid, requestId, subcommand, ...readData(r, ctx.operation?.(requestId), ctx) };
  }
  return { type: 'OpRequest', command, sid, requestId, subcommand };
}

export function decodeOpResponse(r: Reader, h: PvaHeader, ctx: DecodeContext): ResponseMessage | undefined {
  const command = h.command;
  if (command === Cmd.GET_FIELD) {
    const requestId = r.i32(),
      status = decodeStatus(r);
    return { type: 'GetFieldResponse', requestId, status, valueType: isSuccess(status) ? decodeType(r, ctx.types) : null };
  }
  if (!OPS.has(command)) return undefined;
  const requestId = r.i32(),
    subcommand = r.u8();
  if (subcommand & Sub.INIT) {
    const status = decodeStatus(r);
    const hasType = isSuccess(status) && (command === Cmd.GET || command === Cmd.PUT || command === Cmd.MONITOR);
    return { type: 'OpInitResponse', command, requestId, subcommand, status, valueType: hasType ? decodeType(r, ctx.types) : null };
  }
  if (command === Cmd.MONITOR) {
    if (subcommand & Sub.DESTROY || subcommand & Sub.PROCESS) {
      return { type: 'OpResponse', command, requestId, subcommand, status: r.remaining > 0 ? decodeStatus(r) : OK };
    }
    const data = readData(r, ctx.operation?.(requestId), ctx);
    if (!data.value) return { type: 'MonitorUpdate', requestId, subcommand, ...data };
    return { type: 'MonitorUpdate', requestId, subcommand, ...data, overrun: BitSet.decode(r) };
  }
  const status = decodeStatus(r);
  if (command === Cmd.RPC)
    return {
      type: 'RpcResponse',
      requestId,
      subcommand,
      status,
      result: isSuccess(status) && r.remaining > 0 ? decodeTyped(r, ctx) : null,
    };
  const hasData = isSuccess(status) && (command === Cmd.GET || (command === Cmd.PUT && (subcommand & Sub.GET) !== 0));
  if (!hasData) return { type: 'OpResponse', command, requestId, subcommand, status };
  return { type: 'DataResponse', command, requestId, subcommand, status, ...readData(r, ctx.operation?.(requestId), ctx) };
}

function writeData(
  w: Writer,
  changed: BitSet | undefined,
  type: StructureDesc | undefined,
  value: PvStructure | undefined,
  opts: EncodeOptions,
): void {
  const bits = changed ?? new BitSet();
  bits.encode(w);
  if (!type || !value) {
    if (!bits.isEmpty()) throw new TypeError('changed fields without a value type and value');
    return;
  }
  encodePartial(w, type, value, bits, opts.registry);
}

const NONE = new BitSet();

/** Write the payload of a monitor update. */
export function encodeMonitorUpdate(w: Writer, m: Extract<Message, { type: 'MonitorUpdate' }>, opts: EncodeOptions): void {
  w.i32(m.requestId);
  w.u8(m.subcommand);
  writeData(w, m.changed, m.valueType, m.value, opts);
  (m.overrun ?? NONE).encode(w);
}

/** A pipelined monitor's ack: `nfree` more updates may come. */
export function encodeMonitorAck(w: Writer, m: Extract<Message, { type: 'MonitorAck' }>): void {
  w.i32(m.sid);
  w.i32(m.requestId);
  w.u8(Sub.PIPELINE);
  w.i32(m.nfree);
}

/** Write the payload of an operation message; false when `m` is not one. */
export function encodeOp(w: Writer, m: Message, opts: EncodeOptions): boolean {
  switch (m.type) {
    case 'OpInitRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeTyped(w, m.pvRequest, opts);
      if (m.queueSize !== undefined) w.i32(m.queueSize);
      return true;
    case 'OpRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      w.u8(m.subcommand);
      return true;
    case 'PutRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      w.u8(m.subcommand);
      writeData(w, m.changed, m.valueType, m.value, opts);
      return true;
    case 'RpcRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeTyped(w, m.argument, opts);
      return true;
    case 'MonitorAck':
      encodeMonitorAck(w, m);
      return true;
    case 'GetFieldRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      w.string(m.field);
      return true;
    case 'DestroyRequest':
    case 'CancelRequest':
      w.i32(m.sid);
      w.i32(m.requestId);
      return true;
    case 'OpInitResponse':
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeStatus(w, m.status);
      if (isSuccess(m.status) && (m.command === Cmd.GET || m.command === Cmd.PUT || m.command === Cmd.MONITOR))
        encodeType(w, m.valueType, opts.registry);
      return true;
    case 'DataResponse':
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeStatus(w, m.status);
      if (isSuccess(m.status)) writeData(w, m.changed, m.valueType, m.value, opts);
      return true;
    case 'OpResponse':
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeStatus(w, m.status);
      return true;
    case 'RpcResponse':
      w.i32(m.requestId);
      w.u8(m.subcommand);
      encodeStatus(w, m.status);
      if (isSuccess(m.status)) encodeTyped(w, m.result, opts);
      return true;
    case 'MonitorUpdate':
      encodeMonitorUpdate(w, m, opts);
      return true;
    case 'GetFieldResponse':
      w.i32(m.requestId);
      encodeStatus(w, m.status);
      if (isSuccess(m.status)) encodeType(w, m.valueType, opts.registry);
      return true;
  }
  return false;
}
