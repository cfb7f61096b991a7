// A PKCS#12 keychain (the `.p12` file of EPICS_PVA_TLS_KEYCHAIN) read with node:crypto alone:
// its private key and certificate (when it has them) and every other certificate in it, which
// are the trust anchors, as core-pva and pvxs take them. Node's own `pfx` option cannot load a
// keychain that holds certificates only (a client's "trust store"), so the file is decoded here:
// DER, the PKCS#12 MAC (the password check), PBES2 (PBKDF2 with AES, what keytool and OpenSSL 3
// write) and the older PKCS#12 encryption of RFC 7292 appendix C: triple-DES, and RC2 and RC4
// (rc2.ts, rc4.ts), which OpenSSL 1.1 and `openssl pkcs12 -export -legacy` write.
import {
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  pbkdf2Sync,
  timingSafeEqual,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { rc2CbcDecrypt } from './rc2.js';
import { rc4 } from './rc4.js';

/** What a keychain holds. */
export interface Keychain {
  /** The private key and its certificate, when the keychain has them (an x509 identity). */
  key: KeyObject | undefined;
  cert: X509Certificate | undefined;
  /** Every other certificate: the authorities the peer's certificate is checked against. */
  trusted: X509Certificate[];
}

/** A keychain that cannot be read: its file, its password or its format. */
export class KeychainError extends Error {}

// ---- DER ------------------------------------------------------------------------------------

interface Tlv {
  tag: number;
  /** The contents. */
  body: Uint8Array;
  /** The whole encoding, tag and length included. */
  raw: Uint8Array;
}

/** The TLVs of `bytes`, one after another. */
function tlvs(bytes: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  let p = 0;
  while (p < bytes.length) {
    const start = p;
    const tag = bytes[p++]!;
    if (p >= bytes.length) throw new KeychainError('truncated DER');
    let len = bytes[p++]!;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0 || n > 4) throw new KeychainError('unsupported DER length');
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + bytes[p++]!;
    }
    if (p + len > bytes.length) throw new KeychainError('truncated DER');
    out.push({ tag, body: bytes.subarray(p, p + len), raw: bytes.subarray(start, p + len) });
    p += len;
  }
  return out;
}

/** The one TLV of `bytes` with `tag`. */
function one(bytes: Uint8Array, tag: number): Uint8Array {
  const [t] = tlvs(bytes);
  if (!t || t.tag !== tag) throw new KeychainError(`expected DER tag 0x${tag.toString(16)}`);
  return t.body;
}

const SEQUENCE = 0x30;
const OCTETS = 0x04;
const INTEGER = 0x02;
const CONTEXT0 = 0xa0;

function oid(body: Uint8Array): string {
  const parts = [Math.floor(body[0]! / 40), body[0]! % 40];
  let v = 0;
  for (let i = 1; i < body.length; i++) {
    v = v * 128 + (body[i]! & 0x7f);
    if (!(body[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

function int(body: Uint8Array): number {
  let v = 0;
  for (const b of body) v = v * 256 + b;
  return v;
}

/** The contents of an OCTET STRING, joined when it is in constructed (BER) form. */
function octets(t: Tlv): Uint8Array {
  if (t.tag === OCTETS) return t.body;
  if (t.tag === (OCTETS | 0x20)) return Buffer.concat(tlvs(t.body).map(octets));
  throw new KeychainError('expected an OCTET STRING');
}

// ---- the algorithms -------------------------------------------------------------------------

const OIDS = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
};

const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
  '1.2.840.113549.2.7': 'sha1', // hmacWithSHA1
  '1.2.840.113549.2.9': 'sha256', // hmacWithSHA256
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};

const CIPHERS: Record<string, string> = {
  '2.16.840.1.101.3.4.1.2': 'aes-128-cbc',
  '2.16.840.1.101.3.4.1.22': 'aes-192-cbc',
  '2.16.840.1.101.3.4.1.42': 'aes-256-cbc',
  '1.2.840.113549.3.7': 'des-ede3-cbc',
  '1.2.840.113549.3.2': 'rc2-cbc', // RFC 8018 appendix B.2.3
};

/**
 * RFC 7292 appendix C: the PKCS#12 password-based encryption schemes, each with SHA-1, the
 * derivation of appendix B.2 and the length of its key in bytes (and, for RC2, as many effective
 * key bits as the key has).
 */
const PKCS12_PBE: Record<string, { cipher: 'rc4' | 'rc2-cbc' | 'des-ede3-cbc' | 'des-ede-cbc'; keyLen: number }> = {
  '1.2.840.113549.1.12.1.1': { cipher: 'rc4', keyLen: 16 }, // pbeWithSHAAnd128BitRC4
  '1.2.840.113549.1.12.1.2': { cipher: 'rc4', keyLen: 5 }, // pbeWithSHAAnd40BitRC4
  '1.2.840.113549.1.12.1.3': { cipher: 'des-ede3-cbc', keyLen: 24 }, // pbeWithSHAAnd3-KeyTripleDES-CBC
  '1.2.840.113549.1.12.1.4': { cipher: 'des-ede-cbc', keyLen: 16 }, // pbeWithSHAAnd2-KeyTripleDES-CBC
  '1.2.840.113549.1.12.1.5': { cipher: 'rc2-cbc', keyLen: 16 }, // pbeWithSHAAnd128BitRC2-CBC
  '1.2.840.113549.1.12.1.6': { cipher: 'rc2-cbc', keyLen: 5 }, // pbeWithSHAAnd40BitRC2-CBC
};

/** RFC 2268 section 6: the effective key bits of an RC2-CBC parameter's version (the usual ones). */
function rc2Bits(version: number): number | undefined {
  if (version >= 256) return version;
  return { 160: 40, 120: 64, 58: 128 }[version];
}

/** The password as PKCS#12's own derivation takes it: UTF-16BE with two zero bytes at the end. */
function bmp(password: string): Buffer {
  const b = Buffer.alloc(2 * password.length + 2);
  for (let i = 0; i < password.length; i++) b.writeUInt16BE(password.charCodeAt(i), 2 * i);
  return b;
}

/** RFC 7292 appendix B.2: `n` bytes of purpose `id` (1 key, 2 IV, 3 MAC key). */
function pkcs12Kdf(digest: string, password: Buffer, salt: Uint8Array, iterations: number, id: number, n: number): Buffer {
  const u = createHash(digest).digest().length;
  const v = digest === 'sha384' || digest === 'sha512' ? 128 : 64;
  const fill = (src: Uint8Array) => {
    const len = src.length ? v * Math.ceil(src.length / v) : 0;
    const out = Buffer.alloc(len);
    for (let i = 0; i < len; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const I = Buffer.concat([fill(salt), fill(password)]);
  const D = Buffer.alloc(v, id);
  const out: Buffer[] = [];
  for (let got = 0; got < n; got += u) {
    let A = createHash(digest).update(D).update(I).digest();
    for (let r = 1; r < iterations; r++) A = createHash(digest).update(A).digest();
    out.push(A);
    const B = fill(A);
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const s = I[j + k]! + B[k]! + carry;
        I[j + k] = s & 0xff;
        carry = s >> 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, n);
}

/**
 * `data` decrypted with the CBC mode of `cipher` (a name of node:crypto's, or 'rc2-cbc' with
 * `bits` effective key bits), its PKCS#7 padding checked and removed: undefined when the
 * padding is not one, as with a wrong password.
 */
function cbc(cipher: string, key: Uint8Array, iv: Uint8Array, data: Uint8Array, bits = 0): Buffer | undefined {
  const block = iv.length;
  if (data.length === 0 || data.length % block !== 0) return undefined;
  let plain: Buffer;
  if (cipher === 'rc2-cbc') plain = rc2CbcDecrypt(key, bits, iv, data);
  else {
    const d = createDecipheriv(cipher, key, iv).setAutoPadding(false);
    plain = Buffer.concat([d.update(data), d.final()]);
  }
  const n = plain[plain.length - 1]!;
  if (n < 1 || n > block) return undefined;
  for (let i = plain.length - n; i < plain.length; i++) if (plain[i] !== n) return undefined;
  return plain.subarray(0, plain.length - n);
}

/** True when `plain` is one DER SEQUENCE and nothing else, as every encrypted part of a keychain is. */
function oneSequence(plain: Uint8Array): boolean {
  try {
    const all = tlvs(plain);
    return all.length === 1 && all[0]!.tag === SEQUENCE;
  } catch {
    return false;
  }
}

/**
 * Decrypt `data` with the password-based scheme of AlgorithmIdentifier `alg`. Data that does not
 * decrypt to a SEQUENCE (bad padding, or RC4's garbage) throws KeychainError `undecryptable`.
 */
function decrypt(alg: Uint8Array, data: Uint8Array, password: string, undecryptable: string): Buffer {
  const [algOid, params] = tlvs(alg);
  const name = oid(algOid!.body);
  let plain: Buffer | undefined;
  const pbe = PKCS12_PBE[name];
  if (name === OIDS.pbes2) {
    const [kdf, enc] = tlvs(params!.body);
    const [kdfOid, kdfParams] = tlvs(kdf!.body);
    if (oid(kdfOid!.body) !== OIDS.pbkdf2) throw new KeychainError('unsupported key derivation in PBES2');
    const fields = tlvs(kdfParams!.body);
    const salt = fields[0]!.body;
    const iterations = int(fields[1]!.body);
    let prf = 'sha1';
    let keyLength: number | undefined;
    for (const f of fields.slice(2)) {
      if (f.tag === SEQUENCE) prf = DIGESTS[oid(tlvs(f.body)[0]!.body)] ?? '';
      else if (f.tag === INTEGER) keyLength = int(f.body);
    }
    const [encOid, encParams] = tlvs(enc!.body);
    const cipher = CIPHERS[oid(encOid!.body)];
    if (!cipher || !prf) throw new KeychainError('unsupported cipher in PBES2');
    if (cipher === 'rc2-cbc') {
      // RC2-CBC-Parameter: the IV alone (32 effective key bits), or a version and the IV.
      const p = encParams!.tag === OCTETS ? [encParams!] : tlvs(encParams!.body);
      const bits = p.length > 1 ? rc2Bits(int(p[0]!.body)) : 32;
      if (bits === undefined) throw new KeychainError('unsupported RC2 version in PBES2');
      const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, keyLength ?? 16, prf);
      plain = cbc(cipher, key, p[p.length - 1]!.body, data, bits);
    } else {
      const keyLen = cipher === 'des-ede3-cbc' ? 24 : Number(/\d+/.exec(cipher.slice(4))![0]) / 8;
      const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, keyLen, prf);
      plain = cbc(cipher, key, encParams!.body, data);
    }
  } else if (pbe) {
    const [salt, iter] = tlvs(params!.body);
    const pw = bmp(password);
    const key = pkcs12Kdf('sha1', pw, salt!.body, int(iter!.body), 1, pbe.keyLen);
    if (pbe.cipher === 'rc4') plain = rc4(key, data);
    else plain = cbc(pbe.cipher, key, pkcs12Kdf('sha1', pw, salt!.body, int(iter!.body), 2, 8), data, 8 * pbe.keyLen);
  } else {
    throw new KeychainError(`unsupported encryption ${name} (export the keychain with AES, e.g. openssl pkcs12 -export without -legacy)`);
  }
  if (!plain || !oneSequence(plain)) throw new KeychainError(undecryptable);
  return plain;
}

// ---- the keychain ---------------------------------------------------------------------------

/** Check the keychain's MAC with `password`: false when it is the wrong password. */
function macMatches(pfx: Tlv[], authSafe: Uint8Array, password: string): boolean {
  const macData = pfx[2];
  if (!macData) return true; // no MAC: nothing to check the password against
  const [mac, macSalt, iter] = tlvs(macData.body);
  const [digestAlg, digest] = tlvs(mac!.body);
  const algo = DIGESTS[oid(tlvs(digestAlg!.body)[0]!.body)];
  if (!algo) throw new KeychainError('unsupported MAC digest');
  const key = pkcs12Kdf(algo, bmp(password), macSalt!.body, iter ? int(iter.body) : 1, 3, createHash(algo).digest().length);
  const got = createHmac(algo, key).update(authSafe).digest();
  return got.length === digest!.body.length && timingSafeEqual(got, digest!.body);
}

/** Read a PKCS#12 keychain. Throws KeychainError for a wrong password or a file that is not one. */
export function readKeychain(file: Uint8Array, password: string): Keychain {
  let pfx: Tlv[];
  let authSafe: Uint8Array;
  try {
    pfx = tlvs(one(file, SEQUENCE));
    const [type, content] = tlvs(pfx[1]!.body);
    if (oid(type!.body) !== OIDS.data) throw new KeychainError('a keychain signed with a public key is not supported');
    if (content?.tag !== CONTEXT0) throw new KeychainError('no content');
    authSafe = octets(tlvs(content.body)[0]!);
    if (pfx[0]?.tag !== INTEGER) throw new KeychainError('no version');
  } catch (err) {
    throw err instanceof KeychainError
      ? new KeychainError(`not a PKCS#12 keychain: ${err.message}`)
      : new KeychainError('not a PKCS#12 keychain');
  }
  if (!macMatches(pfx, authSafe, password)) throw new KeychainError('wrong password (the keychain MAC does not match)');
  // Without a MAC, the decryption is what finds a wrong password out.
  const undecryptable = pfx[2]
    ? 'the keychain contents do not decrypt (a damaged keychain?)'
    : 'wrong password (the keychain has no MAC, and its contents do not decrypt with this password)';
  const certs: Array<{ cert: X509Certificate; keyId: string | undefined }> = [];
  const keys: Array<{ key: KeyObject; keyId: string | undefined }> = [];
  try {
    for (const info of tlvs(one(authSafe, SEQUENCE))) {
      const [type, content] = tlvs(info.body);
      const kind = oid(type!.body);
      let safeContents: Uint8Array;
      if (kind === OIDS.data) safeContents = octets(tlvs(content!.body)[0]!);
      else if (kind === OIDS.encryptedData) {
        const [, encInfo] = tlvs(one(content!.body, SEQUENCE));
        const [, alg, encrypted] = tlvs(encInfo!.body);
        // [0] IMPLICIT OCTET STRING, primitive or (BER) constructed
        const data = encrypted!.tag === 0x80 ? encrypted!.body : Buffer.concat(tlvs(encrypted!.body).map(octets));
        safeContents = decrypt(alg!.body, data, password, undecryptable);
      } else continue;
      for (const bag of tlvs(one(safeContents, SEQUENCE))) {
        const [bagType, value, attrs] = tlvs(bag.body);
        const keyId = attrs ? localKeyId(attrs.body) : undefined;
        const bagKind = oid(bagType!.body);
        const inner = tlvs(value!.body)[0]!;
        if (bagKind === OIDS.certBag) {
          const [certType, certValue] = tlvs(inner.body);
          if (oid(certType!.body) !== OIDS.x509Certificate) continue;
          certs.push({ cert: new X509Certificate(octets(tlvs(certValue!.body)[0]!)), keyId });
        } else if (bagKind === OIDS.shroudedKeyBag) {
          const [alg, data] = tlvs(inner.body);
          const der = decrypt(alg!.body, data!.body, password, undecryptable);
          keys.push({ key: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }), keyId });
        } else if (bagKind === OIDS.keyBag) {
          keys.push({ key: createPrivateKey({ key: Buffer.from(inner.raw), format: 'der', type: 'pkcs8' }), keyId });
        }
      }
    }
  } catch (err) {
    if (err instanceof KeychainError) throw err;
    throw new KeychainError(`cannot decode the keychain: ${(err as Error).message}`);
  }
  if (keys.length > 1) throw new KeychainError('the keychain holds more than one private key');
  const k = keys[0];
  const mine = k
    ? (certs.find((c) => c.keyId !== undefined && c.keyId === k.keyId) ?? certs.find((c) => c.cert.checkPrivateKey(k.key)))
    : undefined;
  if (k && !mine) throw new KeychainError('the keychain has a private key but not its certificate');
  return { key: k?.key, cert: mine?.cert, trusted: certs.filter((c) => c !== mine).map((c) => c.cert) };
}

/** The localKeyId attribute of a bag (hex), which ties a certificate to its key. */
function localKeyId(attrs: Uint8Array): string | undefined {
  for (const a of tlvs(attrs)) {
    const [id, values] = tlvs(a.body);
    if (oid(id!.body) === '1.2.840.113549.1.9.21') return Buffer.from(tlvs(values!.body)[0]!.body).toString('hex');
  }
  return undefined;
}
