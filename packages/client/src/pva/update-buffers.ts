// A monitor's next large update read into the memory of its last one (reuseArrays), as
// pvAccessCPP deserializes into the array it already has: one buffer per monitor, not two. A
// monitor hands over (offer) the buffer its last update's large arrays view once its callback has
// returned; the next large message of that request is read into it when its changed bitset, read
// from the message's first bytes, replaces every one of those arrays. Otherwise the arrays are
// still the base of the update (its unchanged fields), and the message gets another buffer.
import { BitSet } from './bitset.js';
import { Reader } from './buffer.js';
import { Cmd, Flags, Sub } from './constants.js';
import { emptyHeader, isBigEndian, readHeader } from './header.js';
import { fieldSpans, type StructureDesc } from './types.js';
import type { PvStructure, PvValue } from './values.js';

/**
 * Buffers, each with, for every array that views it, the bits (its field and the structures around
 * it) of which one set in an update's changed bitset replaces that array.
 */
export type Views = Map<ArrayBuffer, number[][]>;

/** Offers kept per connection at most (one per monitor of large arrays; the oldest goes first). */
const MAX_OFFERS = 64;

export class UpdateBuffers {
  private readonly offers = new Map<number, Views>();
  private readonly header = emptyHeader();

  /** Request `requestId`'s next large update may be read into one of these buffers if it replaces all of that one's arrays. */
  offer(requestId: number, views: Views): void {
    this.offers.delete(requestId);
    this.offers.set(requestId, views);
    if (this.offers.size > MAX_OFFERS) this.offers.delete(this.offers.keys().next().value!);
  }

  /** Request `requestId` offers nothing (any more). */
  withdraw(requestId: number): void {
    this.offers.delete(requestId);
  }

  get size(): number {
    return this.offers.size;
  }

  /**
   * A buffer offered for the large message whose first bytes (header included) are `prefix`: one
   * of at least `size` bytes whose arrays that monitor update replaces all; the offer is then used
   * up. Undefined if there is none.
   */
  take(size: number, prefix: Uint8Array): ArrayBuffer | undefined {
    if (this.offers.size === 0 || prefix.length < 13) return undefined;
    const h = this.header;
    if (!readHeader(prefix, 0, h) || h.command !== Cmd.MONITOR || (h.flags & (Flags.CONTROL | Flags.SEGMENT_MASK)) !== 0) return undefined;
    const r = new Reader(prefix, !isBigEndian(h.flags), 8);
    const id = r.i32();
    const views = this.offers.get(id);
    if (!views || (r.u8() & (Sub.INIT | Sub.DESTROY | Sub.PROCESS)) !== 0) return undefined;
    let changed: BitSet;
    try {
      changed = BitSet.decode(r);
    } catch {
      return undefined; // not all of the bitset came yet
    }
    for (const [buffer, paths] of views) {
      if (buffer.byteLength < size || !paths.every((p) => p.some((b) => changed.get(b)))) continue;
      this.offers.delete(id);
      return buffer;
    }
    return undefined;
  }
}

/**
 * The buffers of at least `min` bytes that the typed arrays of `value` (of type `desc`) view, each
 * with the bit paths of those arrays: the structure's bit 0, then the offset of each field down to
 * the one holding the array (an array inside a union or a structure array counts as that field's).
 */
export function largeViews(value: PvStructure, desc: StructureDesc, min: number): Views {
  const out: Views = new Map();
  walkStructure(value, desc, 0, [0], min, out);
  return out;
}

function walkStructure(v: PvStructure, desc: StructureDesc, base: number, path: number[], min: number, out: Views): void {
  const spans = fieldSpans(desc);
  let off = base + 1;
  for (let i = 0; i < desc.fields.length; i++) {
    const f = desc.fields[i]!;
    const x = Object.hasOwn(v, f.name) ? v[f.name] : undefined;
    if (x !== null && typeof x === 'object') {
      const p = [...path, off];
      if (f.type.kind === 'structure' && !ArrayBuffer.isView(x) && !Array.isArray(x))
        walkStructure(x as PvStructure, f.type, off, p, min, out);
      else collect(x as PvValue, p, min, out, 0);
    }
    off += spans[i]!;
  }
}

/** Every large buffer viewed anywhere inside `v` (a field the bitset knows as one bit), under `path`. */
function collect(v: PvValue | null, path: number[], min: number, out: Views, depth: number): void {
  if (v === null || typeof v !== 'object' || depth > 64) return;
  if (ArrayBuffer.isView(v)) {
    const b = v.buffer as ArrayBuffer;
    if (b.byteLength < min) return;
    const paths = out.get(b);
    if (paths) paths.push(path);
    else out.set(b, [path]);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) if (x !== null && typeof x === 'object') collect(x as PvValue, path, min, out, depth + 1);
    return;
  }
  for (const x of Object.values(v)) collect(x as PvValue, path, min, out, depth + 1);
}
