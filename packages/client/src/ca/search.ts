// Name resolution without I/O: the messages of a search datagram (a VERSION with a sequence
// number first, then SEARCH requests), the one parser of reply datagrams, the retry schedule.
import { CA_MINOR_PROTOCOL_REVISION, Cmd, DONT_REPLY, HEADER_SIZE, MAX_SEARCH_DATAGRAM, SEQUENCE_NO_IS_VALID } from './constants.js';
import { readHeader, writeHeader, type Header } from './header.js';
import { paddedLength, writeNameMessage } from './messages.js';

/** The first minor protocol version whose servers take SEARCH requests over TCP (CA 4.12). */
export const TCP_SEARCH_MIN_VERSION = 12;

/** Bytes one SEARCH message for this name takes (header + padded name). */
export function searchMessageSize(name: string): number {
  return HEADER_SIZE + paddedLength(name);
}

/** The longest name (in UTF-8 bytes, NUL excluded) whose SEARCH fits a datagram after the VERSION. */
export const MAX_NAME_BYTES = MAX_SEARCH_DATAGRAM - 2 * HEADER_SIZE - 1 - ((MAX_SEARCH_DATAGRAM - 2 * HEADER_SIZE) % 8);

/** Write the VERSION message that opens a search datagram, carrying `sequence`; returns 16. */
export function writeSearchVersion(view: DataView, off: number, sequence: number): number {
  return writeHeader(view, off, Cmd.VERSION, 0, SEQUENCE_NO_IS_VALID, CA_MINOR_PROTOCOL_REVISION, sequence, 0);
}

const utf8 = new TextEncoder();

/**
 * Write one SEARCH request (header and padded name) at `off`; the caller made room for
 * HEADER_SIZE + paddedLength(name) bytes. Returns the bytes written.
 */
export function writeSearchRequest(view: DataView, bytes: Uint8Array, off: number, name: string, cid: number): number {
  const n = writeNameMessage(view, bytes, off, Cmd.SEARCH, name, DONT_REPLY, CA_MINOR_PROTOCOL_REVISION, cid, cid);
  if (n) return n;
  // Not ASCII: UTF-8 bytes, NUL-terminated, padded to 8.
  const enc = utf8.encode(name);
  const size = (enc.length + 8) & ~7;
  bytes.set(enc, off + HEADER_SIZE);
  bytes.fill(0, off + HEADER_SIZE + enc.length, off + HEADER_SIZE + size);
  return writeHeader(view, off, Cmd.SEARCH, size, DONT_REPLY, CA_MINOR_PROTOCOL_REVISION, cid, cid) + size;
}

/** What a server's reply datagram tells a searcher, one call per message that matters. */
export interface SearchReplyHandler {
  /**
   * A server has `cid`: `address` is the IPv4 address it gave as a uint32 (0 or 0xffffffff:
   * the datagram's source), `port` its TCP port, `version` its minor protocol version.
   */
  searchReply(cid: number, address: number, port: number, version: number): void;
  /** The server answered the datagram that carried `sequence` (its VERSION echo). */
  searchVersion(sequence: number): void;
}

/**
 * Walk a datagram from a server in place, calling `handler` for each SEARCH reply and VERSION;
 * other messages are skipped. `h` is scratch space (no allocation per datagram). Returns false
 * when the datagram ends in a malformed message (what came before it was reported).
 */
export function parseSearchReplies(bytes: Uint8Array, view: DataView, h: Header, handler: SearchReplyHandler): boolean {
  const len = bytes.length;
  let pos = 0;
  while (pos < len) {
    const hs = readHeader(view, pos, len - pos, h);
    if (hs === 0 || pos + hs + h.payloadSize > len) return false;
    if (h.command === Cmd.SEARCH) {
      const version = h.payloadSize >= 2 ? view.getUint16(pos + hs) : 0;
      handler.searchReply(h.param2, h.param1, h.dataType, version);
    } else if (h.command === Cmd.VERSION) {
      handler.searchVersion(h.param1);
    }
    pos += hs + h.payloadSize;
  }
  return true;
}

/** IPv4 address as a uint32 from dotted form (undefined if malformed). */
export function ipv4ToInt(addr: string): number | undefined {
  const parts = addr.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n >>> 0;
}

export function intToIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}
