// RC4, the stream cipher of PKCS#12's pbeWithSHAAnd128BitRC4 and pbeWithSHAAnd40BitRC4 (RFC 7292
// appendix C): its key scheduling, then its keystream XORed with the data. No RFC specifies RC4
// itself; RFC 6229 gives its test vectors, which the unit tests check. Node's crypto has no RC4:
// OpenSSL 3 keeps it in its legacy provider, which Node does not load. The same function
// encrypts and decrypts.

/** `data` XORed with the RC4 keystream of `key` (1 to 256 bytes). */
export function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  if (key.length < 1 || key.length > 256) throw new RangeError(`an RC4 key has 1 to 256 bytes, not ${key.length}`);
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}
