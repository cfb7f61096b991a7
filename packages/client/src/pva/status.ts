// The Status that completes most replies: OK as the single byte 0xFF, otherwise a type
// (OK, WARNING, ERROR, FATAL), a message and a call tree.
import type { Reader, Writer } from './buffer.js';
import { StatusType } from './constants.js';

export interface Status {
  type: number;
  message: string;
  callTree: string;
}

export const OK: Status = Object.freeze({ type: StatusType.OK, message: '', callTree: '' });

/** True for OK and WARNING (the reply then carries its data). */
export const isSuccess = (s: Status): boolean => s.type === StatusType.OK || s.type === StatusType.WARNING;

export function decodeStatus(r: Reader): Status {
  const t = r.u8();
  if (t === 0xff) return OK;
  return { type: t, message: r.string(), callTree: r.string() };
}

export function encodeStatus(w: Writer, s: Status): void {
  if (s.type === StatusType.OK && !s.message && !s.callTree) {
    w.u8(0xff);
    return;
  }
  w.u8(s.type);
  w.string(s.message);
  w.string(s.callTree);
}
