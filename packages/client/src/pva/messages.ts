// Every PV Access message a client exchanges, as one discriminated union, with decodeMessage
// (header + payload -> message, never throws) and encodeMessage (message -> bytes in a Writer).
import { DecodeError, Reader, Writer } from './buffer.js';
import { Cmd, Ctrl, Flags } from './constants.js';
import { finishMessage, isBigEndian, isControl, isFromServer, startMessage, type PvaHeader } from './header.js';
import type { ControlMessage, DecodeContext, Decoded, EncodeOptions, Message, RequestMessage, ResponseMessage } from './message-types.js';
import { decodeOpRequest, decodeOpResponse, encodeMonitorAck, encodeMonitorUpdate, encodeOp } from './messages-ops.js';
import { decodeSessionRequest, decodeSessionResponse, encodeSession } from './messages-session.js';

export type {
  ChannelName,
  ControlMessage,
  DecodeContext,
  Decoded,
  EncodeOptions,
  InvalidMessage,
  Message,
  Operation,
  RequestMessage,
  ResponseMessage,
  UnknownMessage,
} from './message-types.js';

/** The messages a server sends (the SERVER flag): every response type, so that a new one cannot be left out. */
const FROM_SERVER: Record<ResponseMessage['type'] | 'SetByteOrder' | 'ControlEchoResponse', true> = {
  SetByteOrder: true,
  ControlEchoResponse: true,
  ConnectionValidationRequest: true,
  ConnectionValidated: true,
  SearchResponse: true,
  Beacon: true,
  EchoResponse: true,
  CreateChannelResponse: true,
  DestroyChannelResponse: true,
  AclChange: true,
  OpInitResponse: true,
  DataResponse: true,
  OpResponse: true,
  RpcResponse: true,
  MonitorUpdate: true,
  GetFieldResponse: true,
  ServerMessage: true,
};
const RESPONSES = new Set<string>(Object.keys(FROM_SERVER));

function decodeControl(h: PvaHeader): ControlMessage {
  const data = h.payloadSize;
  if (h.command === Ctrl.SET_BYTE_ORDER && isFromServer(h.flags)) return { type: 'SetByteOrder', bigEndian: isBigEndian(h.flags) };
  if (h.command === Ctrl.ECHO_REQUEST) return { type: 'ControlEchoRequest', data };
  if (h.command === Ctrl.ECHO_RESPONSE) return { type: 'ControlEchoResponse', data };
  return { type: 'Control', command: h.command, data, fromServer: isFromServer(h.flags) };
}

/**
 * Decode one framed message; the direction comes from the header's flags. Never throws:
 * malformed input comes back as an Invalid message. Byte arrays in the result (guid, address,
 * echo payload) are copies; operation data is a new value on the operation's last (see Operation).
 */
export function decodeMessage(h: PvaHeader, payload: Uint8Array, ctx: DecodeContext = {}): Decoded {
  if (isControl(h.flags)) return decodeControl(h);
  const r = new Reader(payload, !isBigEndian(h.flags));
  try {
    const m = isFromServer(h.flags)
      ? (decodeSessionResponse(r, h, ctx) ?? decodeOpResponse(r, h, ctx))
      : (decodeSessionRequest(r, h, ctx) ?? decodeOpRequest(r, h, ctx));
    return m ?? { type: 'Unknown', command: h.command, flags: h.flags, size: payload.length };
  } catch (e) {
    if (e instanceof DecodeError || e instanceof RangeError) return { type: 'Invalid', command: h.command, reason: e.message };
    return { type: 'Invalid', command: h.command, reason: String(e) };
  }
}

/**
 * Append one message (header and payload) to `w`, in the writer's byte order. Values that do
 * not fit their type are programming errors and throw TypeError (nothing is left in `w`).
 */
export function encodeMessage(w: Writer, m: Message, opts: EncodeOptions = {}): void {
  // A server's most frequent message, without the dispatch below.
  if (m.type === 'MonitorUpdate') return framed(w, Cmd.MONITOR, Flags.SERVER, m, opts, encodeMonitorUpdate);
  // And a client's: a pipelined monitor's ack.
  if (m.type === 'MonitorAck') return framed(w, Cmd.MONITOR, 0, m, opts, encodeMonitorAck);
  switch (m.type) {
    case 'SetByteOrder': {
      // The flag is the message: it names the byte order the sender uses from now on.
      const o = startMessage(w, Ctrl.SET_BYTE_ORDER, Flags.CONTROL | Flags.SERVER);
      w.bytes[o + 2] = Flags.CONTROL | Flags.SERVER | (m.bigEndian ? Flags.BIG_ENDIAN : 0);
      return;
    }
    case 'ControlEchoRequest':
      startMessage(w, Ctrl.ECHO_REQUEST, Flags.CONTROL, m.data);
      return;
    case 'ControlEchoResponse':
      startMessage(w, Ctrl.ECHO_RESPONSE, Flags.CONTROL | Flags.SERVER, m.data);
      return;
    case 'Control':
      startMessage(w, m.command, Flags.CONTROL | (m.fromServer ? Flags.SERVER : 0), m.data);
      return;
  }
  framed(w, commandOf(m), RESPONSES.has(m.type) ? Flags.SERVER : 0, m, opts, encodePayload);
}

function encodePayload(w: Writer, m: Message, opts: EncodeOptions): void {
  if (!encodeSession(w, m, opts)) encodeOp(w, m, opts);
}

/** A header, the payload `body` writes, the header's size patched; nothing is left in `w` when `body` throws. */
function framed<M extends Message>(
  w: Writer,
  command: number,
  flags: number,
  m: M,
  opts: EncodeOptions,
  body: (w: Writer, m: M, opts: EncodeOptions) => void,
): void {
  const start = w.length;
  const off = startMessage(w, command, flags);
  try {
    body(w, m, opts);
  } catch (e) {
    w.truncate(start);
    throw e;
  }
  finishMessage(w, off);
}

function commandOf(m: RequestMessage | ResponseMessage): number {
  switch (m.type) {
    case 'ConnectionValidationResponse':
    case 'ConnectionValidationRequest':
      return Cmd.CONNECTION_VALIDATION;
    case 'ConnectionValidated':
      return Cmd.CONNECTION_VALIDATED;
    case 'SearchRequest':
      return Cmd.SEARCH;
    case 'SearchResponse':
      return Cmd.SEARCH_RESPONSE;
    case 'Beacon':
      return Cmd.BEACON;
    case 'EchoRequest':
    case 'EchoResponse':
      return Cmd.ECHO;
    case 'CreateChannelRequest':
    case 'CreateChannelResponse':
      return Cmd.CREATE_CHANNEL;
    case 'DestroyChannelRequest':
    case 'DestroyChannelResponse':
      return Cmd.DESTROY_CHANNEL;
    case 'AclChange':
      return Cmd.ACL_CHANGE;
    case 'PutRequest':
      return Cmd.PUT;
    case 'MonitorAck':
    case 'MonitorUpdate':
      return Cmd.MONITOR;
    case 'RpcRequest':
    case 'RpcResponse':
      return Cmd.RPC;
    case 'GetFieldRequest':
    case 'GetFieldResponse':
      return Cmd.GET_FIELD;
    case 'DestroyRequest':
      return Cmd.DESTROY_REQUEST;
    case 'CancelRequest':
      return Cmd.CANCEL_REQUEST;
    case 'ServerMessage':
      return Cmd.MESSAGE;
    default:
      return m.command;
  }
}

/** Encode messages into bytes of their own (a convenience over a Writer). */
export function encodeMessages(messages: Message[], littleEndian = true, opts: EncodeOptions = {}): Uint8Array {
  const w = new Writer(littleEndian);
  for (const m of messages) encodeMessage(w, m, opts);
  return w.take();
}
