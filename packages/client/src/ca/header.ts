// CA message headers: the 16-byte form and the extended 24-byte form (payload size 0xFFFF
// and data count 0, followed by a uint32 payload size and a uint32 data count). Big-endian.
import { EXTENDED_HEADER_SIZE, HEADER_SIZE, MAX_SMALL_PAYLOAD } from './constants.js';

export interface Header {
  command: number;
  payloadSize: number;
  dataType: number;
  dataCount: number;
  param1: number;
  param2: number;
}

/** True when this payload size / count pair needs the extended header. */
export function needsExtended(payloadSize: number, dataCount: number): boolean {
  return payloadSize > MAX_SMALL_PAYLOAD || dataCount > 0xffff;
}

/** Bytes the header of a message with this payload size and count takes. */
export function headerSizeFor(payloadSize: number, dataCount: number): number {
  return needsExtended(payloadSize, dataCount) ? EXTENDED_HEADER_SIZE : HEADER_SIZE;
}

/** Write a header at `offset` (choosing the extended form when needed); returns bytes written. */
export function writeHeader(
  view: DataView,
  offset: number,
  command: number,
  payloadSize: number,
  dataType: number,
  dataCount: number,
  param1: number,
  param2: number,
): number {
  view.setUint16(offset, command);
  view.setUint16(offset + 4, dataType);
  view.setUint32(offset + 8, param1 >>> 0);
  view.setUint32(offset + 12, param2 >>> 0);
  if (needsExtended(payloadSize, dataCount)) {
    view.setUint16(offset + 2, 0xffff);
    view.setUint16(offset + 6, 0);
    view.setUint32(offset + 16, payloadSize);
    view.setUint32(offset + 20, dataCount);
    return EXTENDED_HEADER_SIZE;
  }
  view.setUint16(offset + 2, payloadSize);
  view.setUint16(offset + 6, dataCount);
  return HEADER_SIZE;
}

/**
 * Read a header at `offset` into `out`. Returns the header length (16 or 24), or 0 when
 * fewer bytes than the header needs are available.
 */
export function readHeader(view: DataView, offset: number, available: number, out: Header): number {
  if (available < HEADER_SIZE) return 0;
  const size = view.getUint16(offset + 2);
  const count = view.getUint16(offset + 6);
  out.command = view.getUint16(offset);
  out.dataType = view.getUint16(offset + 4);
  out.param1 = view.getUint32(offset + 8);
  out.param2 = view.getUint32(offset + 12);
  if (size === 0xffff && count === 0) {
    if (available < EXTENDED_HEADER_SIZE) return 0;
    out.payloadSize = view.getUint32(offset + 16);
    out.dataCount = view.getUint32(offset + 20);
    return EXTENDED_HEADER_SIZE;
  }
  out.payloadSize = size;
  out.dataCount = count;
  return HEADER_SIZE;
}

export function emptyHeader(): Header {
  return { command: 0, payloadSize: 0, dataType: 0, dataCount: 0, param1: 0, param2: 0 };
}

/** Round up to the CA 8-byte payload alignment. */
export function align8(n: number): number {
  const r = n % 8;
  return r === 0 ? n : n + 8 - r;
}
