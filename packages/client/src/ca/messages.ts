// Every CA message as a discriminated union, with one encoder (into a ByteWriter) and one
// decoder per direction: requests (client -> server) and responses (server -> client).
import { Cmd, DO_REPLY, SEQUENCE_NO_IS_VALID } from './constants.js';
import { align8, emptyHeader, headerSizeFor, readHeader, writeHeader, type Header } from './header.js';
import { readCString } from './dbr.js';
import { ByteWriter } from '../wire/byte-writer.js';

export type RequestMessage =
  | { type: 'VersionRequest'; priority: number; version: number; sequence?: number }
  | { type: 'SearchRequest'; name: string; cid: number; version: number; reply: number }
  | { type: 'CreateChanRequest'; name: string; cid: number; version: number }
  | { type: 'ClientNameRequest'; name: string }
  | { type: 'HostNameRequest'; name: string }
  | { type: 'ReadNotifyRequest'; dataType: number; count: number; sid: number; ioid: number }
  | { type: 'WriteRequest'; dataType: number; count: number; sid: number; ioid: number; payload: Uint8Array }
  | { type: 'WriteNotifyRequest'; dataType: number; count: number; sid: number; ioid: number; payload: Uint8Array }
  | { type: 'EventAddRequest'; dataType: number; count: number; sid: number; subscriptionId: number; mask: number }
  | { type: 'EventCancelRequest'; dataType: number; count: number; sid: number; subscriptionId: number }
  | { type: 'ClearChannelRequest'; sid: number; cid: number }
  | { type: 'EchoRequest' }
  | { type: 'EventsOffRequest' }
  | { type: 'EventsOnRequest' }
  | { type: 'RepeaterRegisterRequest'; address: number };

export type ResponseMessage =
  | { type: 'VersionResponse'; version: number; priority: number; sequence: number }
  | { type: 'SearchResponse'; port: number; address: number; cid: number; version: number }
  | { type: 'NotFoundResponse'; cid: number; version: number }
  | { type: 'CreateChanResponse'; dataType: number; count: number; cid: number; sid: number }
  | { type: 'AccessRightsResponse'; cid: number; rights: number }
  | { type: 'CreateChFailResponse'; cid: number }
  | { type: 'ServerDisconnResponse'; cid: number }
  | { type: 'ReadNotifyResponse'; dataType: number; count: number; status: number; ioid: number; payload: Uint8Array }
  | { type: 'WriteNotifyResponse'; dataType: number; count: number; status: number; ioid: number }
  | { type: 'EventAddResponse'; dataType: number; count: number; status: number; subscriptionId: number; payload: Uint8Array }
  | { type: 'ClearChannelResponse'; sid: number; cid: number }
  | { type: 'ErrorResponse'; cid: number; status: number; request: Header | undefined; message: string }
  | { type: 'EchoResponse' }
  | { type: 'Beacon'; version: number; port: number; beaconId: number; address: number }
  | { type: 'RepeaterConfirmResponse'; address: number };

export type Message = RequestMessage | ResponseMessage;

/** A message the decoder could not accept; the caller treats it as a protocol error. */
export interface Invalid {
  type: 'Invalid';
  command: number;
  reason: string;
}

const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** A NUL-terminated, 8-byte-padded string payload. */
export function paddedString(s: string): Uint8Array {
  const b = utf8.encode(s);
  const out = new Uint8Array(align8(b.length + 1));
  out.set(b);
  return out;
}

function put(w: ByteWriter, cmd: number, payload: Uint8Array, dataType: number, count: number, p1: number, p2: number): void {
  const size = align8(payload.length);
  const hs = headerSizeFor(size, count);
  const off = w.reserve(hs + size);
  writeHeader(w.dataView, off, cmd, size, dataType, count, p1, p2);
  if (payload.length) w.bytes.set(payload, off + hs);
  if (size > payload.length) w.bytes.fill(0, off + hs + payload.length, off + hs + size);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/** Payload bytes of a name: UTF-8, NUL-terminated, padded to 8. */
export function paddedLength(s: string): number {
  return align8((isAscii(s) ? s.length : utf8.encode(s).length) + 1);
}

/**
 * Write a 16-byte header plus a NUL-terminated, 8-byte-padded ASCII name at `off` of `b`/`v`
 * (the caller made room: 16 + paddedLength(name) bytes). Returns the bytes written, or 0
 * when the name is not plain ASCII (the caller then takes the general path).
 */
export function writeNameMessage(
  v: DataView,
  b: Uint8Array,
  off: number,
  cmd: number,
  name: string,
  dataType: number,
  count: number,
  p1: number,
  p2: number,
): number {
  const n = name.length;
  const size = (n + 8) & ~7;
  const base = off + 16;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c > 127) return 0;
    b[base + i] = c;
  }
  for (let i = n; i < size; i++) b[base + i] = 0;
  writeHeader(v, off, cmd, size, dataType, count, p1, p2);
  return 16 + size;
}

/** A message whose payload is a name, written straight into the writer (no intermediate buffer). */
function putName(w: ByteWriter, cmd: number, name: string, dataType: number, count: number, p1: number, p2: number): void {
  const size = (name.length + 8) & ~7;
  if (16 + size <= 0xfffe) {
    const off = w.reserve(16 + size);
    if (writeNameMessage(w.dataView, w.bytes, off, cmd, name, dataType, count, p1, p2)) return;
    w.length = off; // not ASCII: undo and take the general path
  }
  put(w, cmd, paddedString(name), dataType, count, p1, p2);
}

function header(w: ByteWriter, cmd: number, dataType: number, count: number, p1: number, p2: number): void {
  const off = w.reserve(headerSizeFor(0, count)); // a count past 0xffff needs the 24-byte form
  writeHeader(w.dataView, off, cmd, 0, dataType, count, p1, p2);
}

/** CREATE_CHAN request, appended without building a message object (the hot path of a snapshot). */
export function encodeCreateChan(w: ByteWriter, name: string, cid: number, version: number): void {
  putName(w, Cmd.CREATE_CHAN, name, 0, 0, cid, version);
}

/** READ_NOTIFY request, appended without building a message object. */
export function encodeReadNotify(w: ByteWriter, dataType: number, count: number, sid: number, ioid: number): void {
  if (count > 0xffff) return put(w, Cmd.READ_NOTIFY, EMPTY, dataType, count, sid, ioid);
  const off = w.reserve(16); // may replace w.dataView: take the view after it
  writeHeader(w.dataView, off, Cmd.READ_NOTIFY, 0, dataType, count, sid, ioid);
}

/** Append one message (either direction) to `w`. */
export function encodeMessage(w: ByteWriter, m: Message): void {
  switch (m.type) {
    case 'VersionRequest':
      return m.sequence === undefined
        ? header(w, Cmd.VERSION, m.priority, m.version, 0, 0)
        : header(w, Cmd.VERSION, SEQUENCE_NO_IS_VALID, m.version, m.sequence, 0);
    case 'SearchRequest':
      return putName(w, Cmd.SEARCH, m.name, m.reply, m.version, m.cid, m.cid);
    case 'CreateChanRequest':
      return putName(w, Cmd.CREATE_CHAN, m.name, 0, 0, m.cid, m.version);
    case 'ClientNameRequest':
      return put(w, Cmd.CLIENT_NAME, paddedString(m.name), 0, 0, 0, 0);
    case 'HostNameRequest':
      return put(w, Cmd.HOST_NAME, paddedString(m.name), 0, 0, 0, 0);
    case 'ReadNotifyRequest':
      return put(w, Cmd.READ_NOTIFY, EMPTY, m.dataType, m.count, m.sid, m.ioid);
    case 'WriteRequest':
      return put(w, Cmd.WRITE, m.payload, m.dataType, m.count, m.sid, m.ioid);
    case 'WriteNotifyRequest':
      return put(w, Cmd.WRITE_NOTIFY, m.payload, m.dataType, m.count, m.sid, m.ioid);
    case 'EventAddRequest': {
      const p = new Uint8Array(16);
      new DataView(p.buffer).setUint16(12, m.mask);
      return put(w, Cmd.EVENT_ADD, p, m.dataType, m.count, m.sid, m.subscriptionId);
    }
    case 'EventCancelRequest':
      return put(w, Cmd.EVENT_CANCEL, EMPTY, m.dataType, m.count, m.sid, m.subscriptionId);
    case 'ClearChannelRequest':
      return header(w, Cmd.CLEAR_CHANNEL, 0, 0, m.sid, m.cid);
    case 'EchoRequest':
    case 'EchoResponse':
      return header(w, Cmd.ECHO, 0, 0, 0, 0);
    case 'EventsOffRequest':
      return header(w, Cmd.EVENTS_OFF, 0, 0, 0, 0);
    case 'EventsOnRequest':
      return header(w, Cmd.EVENTS_ON, 0, 0, 0, 0);
    case 'RepeaterRegisterRequest':
      return header(w, Cmd.REPEATER_REGISTER, 0, 0, 0, m.address);
    case 'VersionResponse':
      return header(w, Cmd.VERSION, m.priority, m.version, m.sequence, 0);
    case 'SearchResponse': {
      const p = new Uint8Array(8);
      new DataView(p.buffer).setUint16(0, m.version);
      return put(w, Cmd.SEARCH, p, m.port, 0, m.address, m.cid);
    }
    case 'NotFoundResponse':
      return header(w, Cmd.NOT_FOUND, DO_REPLY, m.version, m.cid, m.cid);
    case 'CreateChanResponse':
      return header(w, Cmd.CREATE_CHAN, m.dataType, m.count, m.cid, m.sid);
    case 'AccessRightsResponse':
      return header(w, Cmd.ACCESS_RIGHTS, 0, 0, m.cid, m.rights);
    case 'CreateChFailResponse':
      return header(w, Cmd.CREATE_CH_FAIL, 0, 0, m.cid, 0);
    case 'ServerDisconnResponse':
      return header(w, Cmd.SERVER_DISCONN, 0, 0, m.cid, 0);
    case 'ReadNotifyResponse':
      return put(w, Cmd.READ_NOTIFY, m.payload, m.dataType, m.count, m.status, m.ioid);
    case 'WriteNotifyResponse':
      return header(w, Cmd.WRITE_NOTIFY, m.dataType, m.count, m.status, m.ioid);
    case 'EventAddResponse':
      return put(w, Cmd.EVENT_ADD, m.payload, m.dataType, m.count, m.status, m.subscriptionId);
    case 'ClearChannelResponse':
      return header(w, Cmd.CLEAR_CHANNEL, 0, 0, m.sid, m.cid);
    case 'ErrorResponse': {
      const inner = new ByteWriter(64);
      if (m.request) {
        const r = m.request;
        const off = inner.reserve(headerSizeFor(r.payloadSize, r.dataCount));
        writeHeader(inner.dataView, off, r.command, r.payloadSize, r.dataType, r.dataCount, r.param1, r.param2);
      }
      const text = utf8.encode(m.message);
      const off = inner.reserve(text.length + 1);
      inner.bytes.set(text, off);
      inner.bytes[off + text.length] = 0;
      return put(w, Cmd.ERROR, inner.take(), 0, 0, m.cid, m.status);
    }
    case 'Beacon':
      return header(w, Cmd.RSRV_IS_UP, m.version, m.port, m.beaconId, m.address);
    case 'RepeaterConfirmResponse':
      return header(w, Cmd.REPEATER_CONFIRM, 0, 0, 0, m.address);
  }
}

/** Encode one message to its own bytes. */
export function encode(m: Message): Uint8Array {
  const w = new ByteWriter(64);
  encodeMessage(w, m);
  return w.take();
}

const invalid = (command: number, reason: string): Invalid => ({ type: 'Invalid', command, reason });

function nameOf(payload: Uint8Array): string {
  return readCString(payload, 0, payload.length);
}

/** Decode a message a client sends (as a server sees it). */
export function decodeRequest(h: Header, payload: Uint8Array): RequestMessage | Invalid {
  const { command: c, dataType: t, dataCount: n, param1: p1, param2: p2 } = h;
  switch (c) {
    case Cmd.VERSION:
      return t & SEQUENCE_NO_IS_VALID && p1 !== 0
        ? { type: 'VersionRequest', priority: 0, version: n, sequence: p1 }
        : { type: 'VersionRequest', priority: t, version: n };
    case Cmd.SEARCH:
      return { type: 'SearchRequest', name: nameOf(payload), cid: p1, version: n, reply: t };
    case Cmd.CREATE_CHAN:
      return { type: 'CreateChanRequest', name: nameOf(payload), cid: p1, version: p2 };
    case Cmd.CLIENT_NAME:
      return { type: 'ClientNameRequest', name: nameOf(payload) };
    case Cmd.HOST_NAME:
      return { type: 'HostNameRequest', name: nameOf(payload) };
    case Cmd.READ_NOTIFY:
      return { type: 'ReadNotifyRequest', dataType: t, count: n, sid: p1, ioid: p2 };
    case Cmd.WRITE:
      return { type: 'WriteRequest', dataType: t, count: n, sid: p1, ioid: p2, payload };
    case Cmd.WRITE_NOTIFY:
      return { type: 'WriteNotifyRequest', dataType: t, count: n, sid: p1, ioid: p2, payload };
    case Cmd.EVENT_ADD: {
      if (payload.length < 16) return invalid(c, 'EVENT_ADD payload shorter than 16 bytes');
      const mask = new DataView(payload.buffer, payload.byteOffset, 16).getUint16(12);
      return { type: 'EventAddRequest', dataType: t, count: n, sid: p1, subscriptionId: p2, mask };
    }
    case Cmd.EVENT_CANCEL:
      return { type: 'EventCancelRequest', dataType: t, count: n, sid: p1, subscriptionId: p2 };
    case Cmd.CLEAR_CHANNEL:
      return { type: 'ClearChannelRequest', sid: p1, cid: p2 };
    case Cmd.ECHO:
      return { type: 'EchoRequest' };
    case Cmd.EVENTS_OFF:
      return { type: 'EventsOffRequest' };
    case Cmd.EVENTS_ON:
      return { type: 'EventsOnRequest' };
    case Cmd.REPEATER_REGISTER:
      return { type: 'RepeaterRegisterRequest', address: p2 };
    default:
      return invalid(c, `unknown request command ${c}`);
  }
}

/** Decode a message a server sends (TCP or UDP). `payload` may be a view into a reused buffer. */
export function decodeResponse(h: Header, payload: Uint8Array): ResponseMessage | Invalid {
  const { command: c, dataType: t, dataCount: n, param1: p1, param2: p2 } = h;
  switch (c) {
    case Cmd.EVENT_ADD:
      return { type: 'EventAddResponse', dataType: t, count: n, status: p1, subscriptionId: p2, payload };
    case Cmd.READ_NOTIFY:
      return { type: 'ReadNotifyResponse', dataType: t, count: n, status: p1, ioid: p2, payload };
    case Cmd.VERSION:
      return { type: 'VersionResponse', version: n, priority: t, sequence: p1 };
    case Cmd.SEARCH: {
      const version = payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 0;
      return { type: 'SearchResponse', port: t, address: p1, cid: p2, version };
    }
    case Cmd.NOT_FOUND:
      return { type: 'NotFoundResponse', cid: p1, version: n };
    case Cmd.CREATE_CHAN:
      return { type: 'CreateChanResponse', dataType: t, count: n, cid: p1, sid: p2 };
    case Cmd.ACCESS_RIGHTS:
      return { type: 'AccessRightsResponse', cid: p1, rights: p2 };
    case Cmd.CREATE_CH_FAIL:
      return { type: 'CreateChFailResponse', cid: p1 };
    case Cmd.SERVER_DISCONN:
      return { type: 'ServerDisconnResponse', cid: p1 };
    case Cmd.WRITE_NOTIFY:
      return { type: 'WriteNotifyResponse', dataType: t, count: n, status: p1, ioid: p2 };
    case Cmd.CLEAR_CHANNEL:
      return { type: 'ClearChannelResponse', sid: p1, cid: p2 };
    case Cmd.ERROR:
      return decodeError(h, payload);
    case Cmd.ECHO:
      return { type: 'EchoResponse' };
    case Cmd.RSRV_IS_UP:
      return { type: 'Beacon', version: t, port: n, beaconId: p1, address: p2 };
    case Cmd.REPEATER_CONFIRM:
      return { type: 'RepeaterConfirmResponse', address: p2 };
    default:
      return invalid(c, `unknown response command ${c}`);
  }
}

function decodeError(h: Header, payload: Uint8Array): ResponseMessage | Invalid {
  let request: Header | undefined;
  let off = 0;
  // The request the error is about, as its header (16 or 24 bytes) opens the payload.
  const h2 = emptyHeader();
  off = readHeader(new DataView(payload.buffer, payload.byteOffset, payload.length), 0, payload.length, h2);
  if (off) request = h2;
  const message = readCString(payload, off, payload.length - off);
  return { type: 'ErrorResponse', cid: h.param1, status: h.param2, request, message };
}
