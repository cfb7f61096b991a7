// The older PKCS#12 encryption (RFC 7292 appendix C) that OpenSSL 1.1 and `openssl pkcs12
// -export -legacy` write: RC2 against the test vectors of RFC 2268 section 5, RC4 against those
// of RFC 6229, and keychains the system's OpenSSL 3 writes with each scheme (its legacy provider
// has RC2 and RC4), read back to the key and certificates written, and refused with a wrong
// password. Without an OpenSSL 3 whose legacy provider loads, the keychains are not made and
// those tests are skipped; the vectors always run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeychainError, readKeychain } from '../../src/transport/keychain.js';
import { rc2CbcDecrypt, rc2KeySchedule } from '../../src/transport/rc2.js';
import { rc4 } from '../../src/transport/rc4.js';

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');

describe('RC2 (RFC 2268)', () => {
  // Section 5: effective key bits, key, plaintext, ciphertext.
  const vectors: Array<[number, string, string, string]> = [
    [63, '00000000 00000000', '00000000 00000000', 'ebb773f9 93278eff'],
    [64, 'ffffffff ffffffff', 'ffffffff ffffffff', '278b27e4 2e2f0d49'],
    [64, '30000000 00000000', '10000000 00000001', '30649edf 9be7d2c2'],
    [64, '88', '00000000 00000000', '61a8a244 adacccf0'],
    [64, '88bca90e 90875a', '00000000 00000000', '6ccf4308 974c267f'],
    [64, '88bca90e 90875a7f 0f79c384 627bafb2', '00000000 00000000', '1a807d27 2bbe5db1'],
    [128, '88bca90e 90875a7f 0f79c384 627bafb2', '00000000 00000000', '2269552a b0f85ca6'],
    [129, '88bca90e 90875a7f 0f79c384 627bafb2 16f80a6f 85920584 c42fceb0 be255daf 1e', '00000000 00000000', '5b78d3a4 3dfff1f1'],
  ];

  it.each(vectors)('section 5: %i effective bits, key %s: the ciphertext decrypts to the plaintext', (bits, key, plain, cipher) => {
    // One block in CBC mode with an IV of zeros is the block cipher itself.
    expect(rc2CbcDecrypt(hex(key), bits, new Uint8Array(8), hex(cipher)).toString('hex')).toBe(hex(plain).toString('hex'));
  });

  it('CBC: each block is XORed with the ciphertext before it, the first with the IV', () => {
    const [bits, key, , c] = vectors[6]!;
    const iv = hex('0102030405060708');
    const two = rc2CbcDecrypt(hex(key), bits, iv, Buffer.concat([hex(c), hex(c)]));
    expect(two.subarray(0, 8).toString('hex')).toBe('0102030405060708');
    expect(two.subarray(8).toString('hex')).toBe(hex(c).toString('hex'));
  });

  it('refuses keys, effective bits, IVs and lengths out of range', () => {
    expect(() => rc2KeySchedule(new Uint8Array(0), 40)).toThrow(RangeError);
    expect(() => rc2KeySchedule(new Uint8Array(129), 40)).toThrow(RangeError);
    expect(() => rc2KeySchedule(new Uint8Array(5), 0)).toThrow(RangeError);
    expect(() => rc2KeySchedule(new Uint8Array(5), 1025)).toThrow(RangeError);
    expect(() => rc2CbcDecrypt(new Uint8Array(5), 40, new Uint8Array(7), new Uint8Array(8))).toThrow(RangeError);
    expect(() => rc2CbcDecrypt(new Uint8Array(5), 40, new Uint8Array(8), new Uint8Array(9))).toThrow(RangeError);
  });
});

describe('RC4 (RFC 6229)', () => {
  // Section 2: key, offset into the keystream, the 16 bytes there.
  const vectors: Array<[string, number, string]> = [
    ['0102030405', 0, 'b2396305f03dc027ccc3524a0a1118a8'],
    ['0102030405', 16, '6982944f18fc82d589c403a47a0d0919'],
    ['0102030405', 4096, 'ff25b58995996707e51fbdf08b34d875'],
    ['01020304050607', 0, '293f02d47f37c9b633f2af5285feb46b'],
    ['01020304050607', 16, 'e620f1390d19bd84e2e0fd752031afc1'],
    ['0102030405060708090a0b0c0d0e0f10', 0, '9ac7cc9a609d1ef7b2932899cde41b97'],
  ];

  it.each(vectors)('key %s, keystream at %i', (key, offset, stream) => {
    expect(
      rc4(hex(key), new Uint8Array(offset + 16))
        .subarray(offset)
        .toString('hex'),
    ).toBe(stream);
  });

  it('the same function decrypts what it encrypted', () => {
    const data = Buffer.from('PKCS#12 keychain');
    expect(rc4(hex('0102030405'), rc4(hex('0102030405'), data))).toEqual(data);
  });
});

// ---- keychains written by OpenSSL ----------------------------------------------------------------

/** Why OpenSSL cannot write the keychains here, or '' when it can. */
function opensslMissing(): string {
  const r = spawnSync('openssl', ['list', '-providers', '-provider', 'legacy'], { encoding: 'utf8' });
  if (r.error) return `no openssl: ${r.error.message}`;
  if (r.status !== 0) return `openssl's legacy provider does not load: ${r.stderr.trim()}`;
  return '';
}
const missing = opensslMissing();
if (missing) process.stderr.write(`keychain-legacy.test.ts: keychains written by OpenSSL skipped (${missing})\n`);

const PASSWORD = 'legacy pass';
let dir = '';
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

/** The DER of the OID 1.2.840.113549.1.12.1.<last> (a PKCS#12 scheme), as it appears in a keychain that uses it. */
const oidDer = (last: number) => Buffer.from([0x06, 0x0a, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c, 0x01, last]);
const RC2_CBC = Buffer.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x03, 0x02]);

/** A keychain of the key, its certificate and the authority, written with `options` (openssl pkcs12 -export ...). */
function keychain(name: string, ...options: string[]): Buffer {
  openssl(
    'pkcs12',
    '-export',
    ...options,
    '-inkey',
    'key.pem',
    '-in',
    'cert.pem',
    '-certfile',
    'ca.pem',
    '-passout',
    `pass:${PASSWORD}`,
    '-out',
    `${name}.p12`,
  );
  return readFileSync(join(dir, `${name}.p12`));
}

const LEGACY = ['-provider', 'legacy', '-provider', 'default'];

describe.skipIf(missing !== '')('keychains written by OpenSSL with the older PKCS#12 encryption', () => {
  let keyDer: Buffer;
  let certDer: Buffer;
  let caDer: Buffer;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'keychain-legacy-'));
    // An authority and a key it certifies, EC keys (quick to make).
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
      '-subj',
      '/CN=legacy test authority',
      '-days',
      '2',
    );
    openssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'req.pem',
      '-subj',
      '/CN=legacy client',
    );
    openssl('x509', '-req', '-in', 'req.pem', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', '2');
    keyDer = createPrivateKey(readFileSync(join(dir, 'key.pem'))).export({ type: 'pkcs8', format: 'der' });
    certDer = new X509Certificate(readFileSync(join(dir, 'cert.pem'))).raw;
    caDer = new X509Certificate(readFileSync(join(dir, 'ca.pem'))).raw;
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function expectRead(file: Buffer): void {
    const k = readKeychain(file, PASSWORD);
    expect(k.key?.export({ type: 'pkcs8', format: 'der' })).toEqual(keyDer);
    expect(k.cert?.raw).toEqual(certDer);
    expect(k.trusted.map((c) => c.raw)).toEqual([caDer]);
    expect(() => readKeychain(file, 'not the password')).toThrow(/wrong password \(the keychain MAC does not match\)/);
  }

  it('openssl pkcs12 -export -legacy: the certificates with 40-bit RC2 (.6), the key with 3-key triple-DES (.3)', () => {
    const file = keychain('legacy', '-legacy');
    expect(file.includes(oidDer(6))).toBe(true);
    expect(file.includes(oidDer(3))).toBe(true);
    expectRead(file);
  });

  // -certpbe and -keypbe, with the last arc of the scheme's OID in RFC 7292 appendix C.
  const schemes: Array<[string, number]> = [
    ['PBE-SHA1-RC4-128', 1],
    ['PBE-SHA1-RC4-40', 2],
    ['PBE-SHA1-3DES', 3],
    ['PBE-SHA1-2DES', 4],
    ['PBE-SHA1-RC2-128', 5],
    ['PBE-SHA1-RC2-40', 6],
  ];

  it.each(schemes)('-certpbe %s -keypbe the same (1.2.840.113549.1.12.1.%i)', (scheme, arc) => {
    const file = keychain(scheme, ...LEGACY, '-certpbe', scheme, '-keypbe', scheme);
    expect(file.includes(oidDer(arc))).toBe(true);
    expectRead(file);
  });

  it.each(['RC2-40-CBC', 'RC2-64-CBC', 'RC2-CBC'])('PBES2 with -certpbe %s (RC2-CBC with its version, RFC 8018 B.2.3)', (cipher) => {
    const file = keychain(`pbes2-${cipher}`, ...LEGACY, '-certpbe', cipher, '-keypbe', 'AES-256-CBC');
    expect(file.includes(RC2_CBC)).toBe(true);
    expectRead(file);
  });

  it.each(schemes)('without a MAC (-nomac), %s with a wrong password: the contents do not decrypt, a KeychainError saying so', (scheme) => {
    const file = keychain(`${scheme}-nomac`, ...LEGACY, '-certpbe', scheme, '-keypbe', scheme, '-nomac');
    expect(readKeychain(file, PASSWORD).cert?.raw).toEqual(certDer);
    for (const wrong of ['not the password', '', 'legacy pas']) {
      let err: unknown;
      try {
        readKeychain(file, wrong);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KeychainError);
      expect((err as Error).message).toMatch(/^wrong password \(the keychain has no MAC/);
    }
  });
});
