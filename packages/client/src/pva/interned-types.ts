// The types of a connection's INIT replies, interned by their bytes: thousands of channels of one
// record type share one description, decoded once. Only types written out in full (no cache ids).
import type { Reader } from './buffer.js';
import { decodeType, type FieldDesc, type TypeCache } from './types.js';

/** Bytes as a string of the same length (a map key). */
const keyDecoder = new TextDecoder('latin1');
const latin1 = (b: Uint8Array): string => keyDecoder.decode(b);

/** Distinct types kept per connection. */
const MAX_TYPES = 256;

export class InternedTypes {
  private readonly byBytes = new Map<string, FieldDesc>();

  /**
   * The type written out in full at `r` (the rest of the message), the same object for the same
   * bytes; undefined when it is not written out in full (a cache id, a null type, nothing).
   * Throws DecodeError for a malformed type.
   */
  read(r: Reader, cache: TypeCache): FieldDesc | undefined {
    const code = r.remaining > 0 ? r.bytes[r.pos]! : -1;
    if (code === 0xfd || code === 0xfe || code === 0xfc || code < 0) return undefined;
    const key = latin1(r.bytes.subarray(r.pos, r.end));
    let type = this.byBytes.get(key);
    if (!type) {
      type = decodeType(r, cache) ?? undefined;
      if (type && this.byBytes.size < MAX_TYPES) this.byBytes.set(key, type);
    }
    return type;
  }
}
