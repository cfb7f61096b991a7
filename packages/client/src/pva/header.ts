// The 8-byte PV Access header: magic 0xCA, version, flags (control/application, segment,
// direction, byte order), command, and a 32-bit payload size in the flagged byte order.
import { Flags, HEADER_SIZE, PVA_MAGIC, PVA_VERSION } from './constants.js';
import type { Writer } from './buffer.js';

export interface PvaHeader {
  version: number;
  flags: number;
  command: number;
  /** Payload bytes (application messages) or the control message's 32-bit datum. */
  payloadSize: number;
}

export const isControl = (flags: number): boolean => (flags & Flags.CONTROL) !== 0;
export const isBigEndian = (flags: number): boolean => (flags & Flags.BIG_ENDIAN) !== 0;
export const isFromServer = (flags: number): boolean => (flags & Flags.SERVER) !== 0;
export const segmentOf = (flags: number): number => flags & Flags.SEGMENT_MASK;

export function emptyHeader(): PvaHeader {
  return { version: 0, flags: 0, command: 0, payloadSize: 0 };
}

/** Read a header at `offset` of `bytes` (8 bytes must be there). False when the magic is wrong. */
export function readHeader(bytes: Uint8Array, offset: number, out: PvaHeader): boolean {
  if (bytes[offset] !== PVA_MAGIC) return false;
  out.version = bytes[offset + 1]!;
  out.flags = bytes[offset + 2]!;
  out.command = bytes[offset + 3]!;
  const b0 = bytes[offset + 4]!,
    b1 = bytes[offset + 5]!,
    b2 = bytes[offset + 6]!,
    b3 = bytes[offset + 7]!;
  out.payloadSize = (isBigEndian(out.flags) ? (b0 << 24) | (b1 << 16) | (b2 << 8) | b3 : (b3 << 24) | (b2 << 16) | (b1 << 8) | b0) >>> 0;
  return true;
}

/**
 * Append a header whose byte-order flag follows the writer; returns its offset so the payload
 * size can be patched once the payload is written (see finishMessage).
 */
export function startMessage(w: Writer, command: number, flags: number, size = 0): number {
  const off = w.reserve(HEADER_SIZE);
  const b = w.bytes;
  b[off] = PVA_MAGIC;
  b[off + 1] = PVA_VERSION;
  b[off + 2] = (flags & ~Flags.BIG_ENDIAN) | (w.littleEndian ? 0 : Flags.BIG_ENDIAN);
  b[off + 3] = command;
  w.dataView.setUint32(off + 4, size >>> 0, w.littleEndian);
  return off;
}

/** Patch the payload size of the message started at `off` to cover everything written since. */
export function finishMessage(w: Writer, off: number): void {
  w.dataView.setUint32(off + 4, w.length + w.externalSince(off) - off - HEADER_SIZE, w.littleEndian);
}
