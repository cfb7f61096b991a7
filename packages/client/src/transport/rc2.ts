// RC2, as RFC 2268 ("A Description of the RC2(r) Encryption Algorithm") describes it: the key
// expansion of section 2 and the decryption of section 4, in CBC mode. Older PKCS#12 keychains
// (OpenSSL 1.1's default, `openssl pkcs12 -export -legacy`) encrypt their certificates with it,
// and Node's crypto has no RC2 (OpenSSL 3 keeps it in its legacy provider, which Node does not
// load). Decryption only: nothing here writes a keychain.

/** RFC 2268 section 2: PITABLE, a permutation of 0..255 taken from the digits of pi. */
const PITABLE = Buffer.from(
  [
    'd978f9c419ddb5ed28e9fd794aa0d89d',
    'c67e37832b76538e624c6488448bfba2',
    '179a59f587b34f1361456d8d09817d32',
    'bd8f40eb86b77b0bf09521225c6b4e82',
    '54d66593ce60b21c7356c014a78cf1dc',
    '1275ca1f3bbee4d1423dd430a33cb626',
    '6fbf0eda4669075727f21d9bbc944303',
    'f811c7f690ef3ee706c3d52fc8661ed7',
    '08e8eade8052eef784aa72ac354d6a2a',
    '961ad2715a1549744b9fd05e0418a4ec',
    'c2e0416e0f51cbcc2491af50a1f47039',
    '997c3a8523b8b47afc02365b25559731',
    '2d5dfa98e38a92ae05df2910676cbac9',
    'd300e6cfe19ea82c6316013f58e289a9',
    '0d38341bab33ffb0bb480c5fb9b1cd2e',
    'c5f3db47e5a59c770aa62068fe7fc1ad',
  ].join(''),
  'hex',
);

/**
 * RFC 2268 section 2: the 64 words K[0..63] of `key` (1 to 128 bytes) with `bits` effective key
 * bits (1 to 1024). PKCS#12's RC2 schemes use 40 and 128, with keys of 5 and 16 bytes.
 */
export function rc2KeySchedule(key: Uint8Array, bits: number): Uint16Array {
  const t = key.length;
  if (t < 1 || t > 128) throw new RangeError(`an RC2 key has 1 to 128 bytes, not ${t}`);
  if (!Number.isInteger(bits) || bits < 1 || bits > 1024) throw new RangeError(`RC2 takes 1 to 1024 effective key bits, not ${bits}`);
  const L = new Uint8Array(128);
  L.set(key);
  for (let i = t; i < 128; i++) L[i] = PITABLE[(L[i - 1]! + L[i - t]!) & 0xff]!;
  const t8 = Math.ceil(bits / 8);
  const tm = 0xff >> (8 * t8 - bits);
  L[128 - t8] = PITABLE[L[128 - t8]! & tm]!;
  for (let i = 127 - t8; i >= 0; i--) L[i] = PITABLE[L[i + 1]! ^ L[i + t8]!]!;
  const K = new Uint16Array(64);
  for (let i = 0; i < 64; i++) K[i] = L[2 * i]! | (L[2 * i + 1]! << 8);
  return K;
}

/** The rotation of each word in a mixing round (section 3.2). */
const S = [1, 2, 3, 5];

/**
 * Section 4.1: decrypt the 8-byte block at `at` of `src` into `R` (four 16-bit words, R[0] from
 * the first two bytes, least significant first). Storing into a Uint16Array takes each word
 * modulo 2^16, as the algorithm's additions and subtractions are.
 */
function decryptBlock(K: Uint16Array, src: Uint8Array, at: number, R: Uint16Array): void {
  for (let i = 0; i < 4; i++) R[i] = src[at + 2 * i]! | (src[at + 2 * i + 1]! << 8);
  let j = 63;
  const mix = () => {
    for (let i = 3; i >= 0; i--) {
      const r = R[i]!;
      const s = S[i]!;
      const a = R[(i + 3) & 3]!; // R[i-1]
      const b = R[(i + 2) & 3]!; // R[i-2]
      const c = R[(i + 1) & 3]!; // R[i-3]
      R[i] = ((r >>> s) | (r << (16 - s))) - K[j--]! - (a & b) - (~a & c);
    }
  };
  const mash = () => {
    for (let i = 3; i >= 0; i--) R[i] = R[i]! - K[R[(i + 3) & 3]! & 63]!;
  };
  for (let n = 0; n < 5; n++) mix();
  mash();
  for (let n = 0; n < 6; n++) mix();
  mash();
  for (let n = 0; n < 5; n++) mix();
}

/**
 * Decrypt `data` (whole 8-byte blocks) with RC2 in CBC mode: `key`, `bits` effective key bits,
 * an 8-byte `iv`. The padding is left on: the caller checks and removes it.
 */
export function rc2CbcDecrypt(key: Uint8Array, bits: number, iv: Uint8Array, data: Uint8Array): Buffer {
  if (iv.length !== 8) throw new RangeError('RC2-CBC takes an 8-byte IV');
  if (data.length % 8 !== 0) throw new RangeError('RC2-CBC data is whole 8-byte blocks');
  const K = rc2KeySchedule(key, bits);
  const out = Buffer.alloc(data.length);
  const R = new Uint16Array(4);
  let prev = iv;
  for (let at = 0; at < data.length; at += 8) {
    decryptBlock(K, data, at, R);
    for (let i = 0; i < 4; i++) {
      out[at + 2 * i] = (R[i]! & 0xff) ^ prev[2 * i]!;
      out[at + 2 * i + 1] = (R[i]! >>> 8) ^ prev[2 * i + 1]!;
    }
    prev = data.subarray(at, at + 8);
  }
  return out;
}
