// Session messages: connection validation, search and beacons, echo, channel create/destroy,
// access-rights changes, and server text messages (payload codecs; headers are in messages.ts).
import { DecodeError, type Reader, type Writer } from './buffer.js';
import { Cmd } from './constants.js';
import type { PvaHeader } from './header.js';
import type { ChannelName, DecodeContext, EncodeOptions, Message, RequestMessage, ResponseMessage } from './message-types.js';
import { decodeStatus, encodeStatus } from './status.js';
import { decodeType, encodeType } from './types.js';
import { decodeValue, encodeValue, type Typed } from './values.js';

const copy = (b: Uint8Array): Uint8Array => b.slice();

/** A type description followed by a value of it, or the null type alone. */
export function decodeTyped(r: Reader, ctx: DecodeContext): Typed | null {
  const type = decodeType(r, ctx.types);
  if (!type) return null;
  return { type, value: decodeValue(r, type, ctx.types) };
}

export function encodeTyped(w: Writer, t: Typed | null, opts: EncodeOptions): void {
  encodeType(w, t ? t.type : null, opts.registry);
  if (t) encodeValue(w, t.type, t.value, opts.registry);
}

function stringArray(r: Reader): string[] {
  const n = r.count();
  if (n > r.remaining) throw new DecodeError(`${n} strings cannot fit in ${r.remaining} bytes`);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(r.string());
  return out;
}

/** Channel lists in SEARCH and CREATE_CHANNEL: a uint16 count, then (int32 id, string name). */
function channels(r: Reader): ChannelName[] {
  const n = r.u16();
  const out: ChannelName[] = [];
  for (let i = 0; i < n; i++) out.push({ id: r.i32(), name: r.string() });
  return out;
}

function writeChannels(w: Writer, list: ChannelName[]): void {
  w.u16(list.length);
  for (const c of list) {
    w.i32(c.id);
    w.string(c.name);
  }
}

export function decodeSessionRequest(r: Reader, h: PvaHeader, ctx: DecodeContext): RequestMessage | undefined {
  switch (h.command) {
    case Cmd.CONNECTION_VALIDATION: {
      const bufferSize = r.i32(),
        registrySize = r.u16(),
        qos = r.u16(),
        authMethod = r.string();
      const authData = r.remaining > 0 ? decodeTyped(r, ctx) : null;
      return { type: 'ConnectionValidationResponse', bufferSize, registrySize, qos, authMethod, authData };
    }
    case Cmd.SEARCH: {
      const sequenceId = r.i32(),
        flags = r.u8();
      r.raw(3);
      const responseAddress = copy(r.raw(16)),
        responsePort = r.u16();
      const protocols = stringArray(r);
      return { type: 'SearchRequest', sequenceId, flags, responseAddress, responsePort, protocols, channels: channels(r) };
    }
    case Cmd.ECHO:
      return { type: 'EchoRequest', payload: copy(r.raw(r.remaining)) };
    case Cmd.CREATE_CHANNEL:
      return { type: 'CreateChannelRequest', channels: channels(r) };
    case Cmd.DESTROY_CHANNEL:
      return { type: 'DestroyChannelRequest', sid: r.i32(), cid: r.i32() };
  }
  return undefined;
}

export function decodeSessionResponse(r: Reader, h: PvaHeader, ctx: DecodeContext): ResponseMessage | undefined {
  switch (h.command) {
    case Cmd.CONNECTION_VALIDATION:
      return { type: 'ConnectionValidationRequest', bufferSize: r.i32(), registrySize: r.u16(), authMethods: stringArray(r) };
    case Cmd.CONNECTION_VALIDATED:
      return { type: 'ConnectionValidated', status: decodeStatus(r) };
    case Cmd.SEARCH_RESPONSE: {
      const guid = copy(r.raw(12)),
        sequenceId = r.i32(),
        address = copy(r.raw(16)),
        port = r.u16();
      const protocol = r.string(),
        found = r.bool();
      const n = r.u16();
      const ids: number[] = [];
      for (let i = 0; i < n; i++) ids.push(r.i32());
      return { type: 'SearchResponse', guid, sequenceId, address, port, protocol, found, ids };
    }
    case Cmd.BEACON: {
      const guid = copy(r.raw(12)),
        flags = r.u8(),
        sequenceId = r.u8(),
        changeCount = r.u16();
      const address = copy(r.raw(16)),
        port = r.u16(),
        protocol = r.string();
      const serverStatus = r.remaining > 0 ? decodeTyped(r, ctx) : null;
      return { type: 'Beacon', guid, flags, sequenceId, changeCount, address, port, protocol, serverStatus };
    }
    case Cmd.ECHO:
      return { type: 'EchoResponse', payload: copy(r.raw(r.remaining)) };
    case Cmd.CREATE_CHANNEL:
      return { type: 'CreateChannelResponse', cid: r.i32(), sid: r.i32(), status: decodeStatus(r) };
    case Cmd.DESTROY_CHANNEL:
      return { type: 'DestroyChannelResponse', sid: r.i32(), cid: r.i32() };
    case Cmd.ACL_CHANGE:
      return { type: 'AclChange', cid: r.i32(), permissions: r.u8() };
    case Cmd.MESSAGE:
      return { type: 'ServerMessage', requestId: r.i32(), messageType: r.u8(), message: r.string() };
  }
  return undefined;
}

function fixed(w: Writer, b: Uint8Array, n: number): void {
  const o = w.reserve(n);
  w.bytes.fill(0, o, o + n);
  w.bytes.set(b.subarray(0, n), o);
}

/** Write the payload of a session message; false when `m` is not one. */
export function encodeSession(w: Writer, m: Message, opts: EncodeOptions): boolean {
  switch (m.type) {
    case 'ConnectionValidationResponse':
      w.i32(m.bufferSize);
      w.u16(m.registrySize);
      w.u16(m.qos);
      w.string(m.authMethod);
      encodeTyped(w, m.authData, opts);
      return true;
    case 'SearchRequest':
      w.i32(m.sequenceId);
      w.u8(m.flags);
      w.u8(0);
      w.u16(0);
      fixed(w, m.responseAddress, 16);
      w.u16(m.responsePort);
      w.size(m.protocols.length);
      for (const p of m.protocols) w.string(p);
      writeChannels(w, m.channels);
      return true;
    case 'EchoRequest':
    case 'EchoResponse':
      w.raw(m.payload);
      return true;
    case 'CreateChannelRequest':
      writeChannels(w, m.channels);
      return true;
    case 'DestroyChannelRequest':
    case 'DestroyChannelResponse':
      w.i32(m.sid);
      w.i32(m.cid);
      return true;
    case 'ConnectionValidationRequest':
      w.i32(m.bufferSize);
      w.u16(m.registrySize);
      w.size(m.authMethods.length);
      for (const a of m.authMethods) w.string(a);
      return true;
    case 'ConnectionValidated':
      encodeStatus(w, m.status);
      return true;
    case 'SearchResponse':
      fixed(w, m.guid, 12);
      w.i32(m.sequenceId);
      fixed(w, m.address, 16);
      w.u16(m.port);
      w.string(m.protocol);
      w.bool(m.found);
      w.u16(m.ids.length);
      for (const id of m.ids) w.i32(id);
      return true;
    case 'Beacon':
      fixed(w, m.guid, 12);
      w.u8(m.flags);
      w.u8(m.sequenceId);
      w.u16(m.changeCount);
      fixed(w, m.address, 16);
      w.u16(m.port);
      w.string(m.protocol);
      encodeTyped(w, m.serverStatus, opts);
      return true;
    case 'CreateChannelResponse':
      w.i32(m.cid);
      w.i32(m.sid);
      encodeStatus(w, m.status);
      return true;
    case 'AclChange':
      w.i32(m.cid);
      w.u8(m.permissions);
      return true;
    case 'ServerMessage':
      w.i32(m.requestId);
      w.u8(m.messageType);
      w.string(m.message);
      return true;
  }
  return false;
}

/** Search flags. */
export const SearchFlags = { REPLY_REQUIRED: 0x01, UNICAST: 0x80 } as const;

/** The 16 bytes of an IPv6 address ("::", "2001:2::1", "fe80::1%eth0"), or of an IPv4 one IPv4-mapped. */
export function addressBytes(ip: string): Uint8Array {
  if (!ip.includes(':')) return ipv4Mapped(ip);
  const [head, tail] = ip.split('%')[0]!.split('::') as [string, string | undefined];
  const words = (p: string | undefined): number[] => (p ? p.split(':').map((w) => Number.parseInt(w, 16) || 0) : []);
  const a = words(head);
  const b = words(tail);
  const all = tail === undefined ? a : [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
  const out = new Uint8Array(16);
  all.slice(0, 8).forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** The 16-byte IPv4-mapped IPv6 form of a dotted IPv4 address ("0.0.0.0" gives ::ffff:0.0.0.0). */
export function ipv4Mapped(ip: string): Uint8Array {
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  ip.split('.').forEach((p, i) => {
    if (i < 4) out[12 + i] = Number(p) & 0xff;
  });
  return out;
}

/** The dotted IPv4 address of an IPv4-mapped (or all-zero) 16-byte address; undefined otherwise. */
export function ipv4Of(addr: Uint8Array): string | undefined {
  for (let i = 0; i < 10; i++) if (addr[i] !== 0) return undefined;
  const mapped = addr[10] === 0xff && addr[11] === 0xff;
  if (!mapped && (addr[10] !== 0 || addr[11] !== 0)) return undefined;
  return `${addr[12]}.${addr[13]}.${addr[14]}.${addr[15]}`;
}

/**
 * The address in a 16-byte address field, as pvxs reads it: ::ffff:a.b.c.d is the IPv4 address
 * "a.b.c.d", anything else an IPv6 address in its shortest text form (RFC 5952); undefined for the
 * any-address of either family (:: or ::ffff:0.0.0.0), which means "the message's source".
 */
export function addressOf(addr: Uint8Array): string | undefined {
  let mapped = addr[10] === 0xff && addr[11] === 0xff;
  for (let i = 0; i < 10 && mapped; i++) if (addr[i] !== 0) mapped = false;
  if (mapped) {
    if ((addr[12]! | addr[13]! | addr[14]! | addr[15]!) === 0) return undefined;
    return `${addr[12]}.${addr[13]}.${addr[14]}.${addr[15]}`;
  }
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((addr[i]! << 8) | addr[i + 1]!);
  if (words.every((w) => w === 0)) return undefined;
  // The longest run of two or more zero words becomes "::" (the first such run on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (best < 0) return hex(words);
  return `${hex(words.slice(0, best))}::${hex(words.slice(best + bestLen))}`;
}
