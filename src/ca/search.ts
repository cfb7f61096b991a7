// Name resolution without I/O: packing many SEARCH requests into datagrams (a VERSION with a
// sequence number first), parsing reply datagrams, and the retry backoff schedule.
import {
  CA_MINOR_PROTOCOL_REVISION, Cmd, DONT_REPLY, EXTENDED_HEADER_SIZE, HEADER_SIZE, MAX_SEARCH_DATAGRAM, SEQUENCE_NO_IS_VALID,
} from './constants.js';
import { emptyHeader, readHeader } from './header.js';
import { decodeResponse, encodeMessage, paddedLength, writeNameMessage, type Invalid, type ResponseMessage } from './messages.js';
import { ByteWriter } from './writer.js';

export interface SearchEntry {
  cid: number;
  name: string;
  /** paddedLength(name), when already known. */
  paddedLength?: number;
}

export interface SearchDatagram {
  sequence: number;
  bytes: Uint8Array;
  cids: number[];
}


/** Bytes one SEARCH message for this name takes (header + padded name). */
export function searchMessageSize(name: string): number {
  return HEADER_SIZE + paddedLength(name);
}

/** The longest name (in UTF-8 bytes, NUL excluded) whose SEARCH fits a datagram after the VERSION. */
export const MAX_NAME_BYTES = MAX_SEARCH_DATAGRAM - 2 * HEADER_SIZE - 1 - ((MAX_SEARCH_DATAGRAM - 2 * HEADER_SIZE) % 8);

/**
 * Pack entries into datagrams of at most `maxBytes`, each opening with a VERSION message that
 * carries a sequence number (servers echo it, which tells which datagram a reply answers).
 * Entries whose name does not fit any datagram are skipped (the caller rejects them earlier).
 */
export function buildSearchDatagrams(
  entries: Iterable<SearchEntry>,
  firstSequence: number,
  maxBytes = MAX_SEARCH_DATAGRAM,
): SearchDatagram[] {
  const out: SearchDatagram[] = [];
  const w = new ByteWriter(maxBytes + 64);
  let seq = firstSequence >>> 0;
  let cids: number[] = [];
  const open = (): void => {
    encodeMessage(w, { type: 'VersionRequest', priority: 0, version: CA_MINOR_PROTOCOL_REVISION, sequence: seq });
  };
  const close = (): void => {
    if (cids.length) out.push({ sequence: seq, bytes: w.take(), cids });
    else w.take();
    cids = [];
    seq = (seq + 1) >>> 0 || 1;
  };
  open();
  for (const e of entries) {
    const size = HEADER_SIZE + (e.paddedLength ?? paddedLength(e.name));
    if (HEADER_SIZE + size > maxBytes) continue;
    if (w.length + size > maxBytes) {
      close();
      open();
    }
    encodeMessage(w, { type: 'SearchRequest', name: e.name, cid: e.cid, version: CA_MINOR_PROTOCOL_REVISION, reply: DONT_REPLY });
    cids.push(e.cid);
  }
  close();
  return out;
}

/** Write the VERSION message that opens a search datagram, carrying `sequence`; returns 16. */
export function writeSearchVersion(view: DataView, off: number, sequence: number): number {
  view.setUint16(off, Cmd.VERSION);
  view.setUint16(off + 2, 0);
  view.setUint16(off + 4, SEQUENCE_NO_IS_VALID);
  view.setUint16(off + 6, CA_MINOR_PROTOCOL_REVISION);
  view.setUint32(off + 8, sequence >>> 0);
  view.setUint32(off + 12, 0);
  return HEADER_SIZE;
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
  view.setUint16(off, Cmd.SEARCH);
  view.setUint16(off + 2, size);
  view.setUint16(off + 4, DONT_REPLY);
  view.setUint16(off + 6, CA_MINOR_PROTOCOL_REVISION);
  view.setUint32(off + 8, cid >>> 0);
  view.setUint32(off + 12, cid >>> 0);
  return HEADER_SIZE + size;
}

/** Parse a UDP datagram from a server into its messages; a malformed tail ends the list. */
export function parseDatagram(bytes: Uint8Array): { messages: ResponseMessage[]; error?: string } {
  const messages: ResponseMessage[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const h = emptyHeader();
  let pos = 0;
  while (pos < bytes.length) {
    const hs = readHeader(view, pos, bytes.length - pos, h);
    if (hs === 0) return { messages, error: 'truncated header' };
    if (hs === EXTENDED_HEADER_SIZE && h.payloadSize > bytes.length) return { messages, error: 'bad extended header' };
    if (pos + hs + h.payloadSize > bytes.length) return { messages, error: 'payload beyond datagram' };
    const m: ResponseMessage | Invalid = decodeResponse(h, bytes.subarray(pos + hs, pos + hs + h.payloadSize));
    if (m.type === 'Invalid') return { messages, error: m.reason };
    messages.push(m);
    pos += hs + h.payloadSize;
  }
  return { messages };
}

/**
 * Delay before search attempt `attempt` (0 = first retry after the initial send), in ms: starts
 * near the round-trip estimate and doubles per attempt, capped at `maxPeriodMs` (libca-like).
 */
export function searchRetryDelay(attempt: number, maxPeriodMs: number, baseMs = 32): number {
  const d = baseMs * 2 ** Math.min(attempt, 30);
  return Math.min(d, maxPeriodMs);
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
