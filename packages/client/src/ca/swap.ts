// In-place byte swapping of big-endian element arrays (CA is big-endian): Buffer's native
// swaps where the runtime has Buffer (Node), pure JS elsewhere.

export type Swapper = (bytes: Uint8Array) => void;

const le = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function swap16js(b: Uint8Array): void {
  for (let i = 0; i + 1 < b.length; i += 2) {
    const t = b[i]!;
    b[i] = b[i + 1]!;
    b[i + 1] = t;
  }
}

function swap32js(b: Uint8Array): void {
  for (let i = 0; i + 3 < b.length; i += 4) {
    const a0 = b[i]!,
      a1 = b[i + 1]!;
    b[i] = b[i + 3]!;
    b[i + 1] = b[i + 2]!;
    b[i + 2] = a1;
    b[i + 3] = a0;
  }
}

function swap64js(b: Uint8Array): void {
  for (let i = 0; i + 7 < b.length; i += 8) {
    for (let j = 0; j < 4; j++) {
      const t = b[i + j]!;
      b[i + j] = b[i + 7 - j]!;
      b[i + 7 - j] = t;
    }
  }
}

/** Node's Buffer when the runtime has one (the core is written for any runtime). */
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

function native(swap: 'swap16' | 'swap32' | 'swap64'): Swapper {
  return (b) => void NodeBuffer!.from(b.buffer, b.byteOffset, b.length)[swap]();
}

const impl: { 2: Swapper; 4: Swapper; 8: Swapper } = NodeBuffer
  ? { 2: native('swap16'), 4: native('swap32'), 8: native('swap64') }
  : { 2: swap16js, 4: swap32js, 8: swap64js };

/** Convert `bytes` (a whole number of `size`-byte big-endian elements) to host order in place. */
export function byteSwap(bytes: Uint8Array, size: number): void {
  if (!le || size < 2) return;
  const f = impl[size as 2 | 4 | 8];
  if (f) f(bytes);
}
