// Secure PV Access without a server: the PKCS#12 reader (keytool's PBES2 keychains, OpenSSL's
// older triple-DES and RC2 ones, a wrong password, a file that is not one; keychain-legacy.test.ts
// has every older scheme), the settings from the environment and the options, the search
// offering "tls", the x509 identity in the validation, Node's TLS errors by what they mean, and
// a pipelined MONITOR INIT a server ignores.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tlsErrorOf } from '../../src/client/errors.js';
import { Cmd, emptyHeader, encodeMessages, OK, readHeader, structure, Sub } from '../../src/pva/index.js';
import type { OpHandler } from '../../src/pva/session.js';
import { session } from '../helpers/pva-session.js';
import { KeychainError, readKeychain } from '../../src/transport/keychain.js';
import { resolvePvaConfig } from '../../src/transport/pva/config.js';
import { loadPvaTls } from '../../src/transport/pva/tls.js';
import { PvaSearcher } from '../../src/transport/pva/udp.js';
import dgram from 'node:dgram';
import { HEADER_SIZE } from '../../src/pva/constants.js';
import { decodeMessage } from '../../src/pva/messages.js';

const fixture = (f: string) => readFileSync(new URL(`../fixtures/tls/${f}`, import.meta.url));
const path = (f: string) => new URL(`../fixtures/tls/${f}`, import.meta.url).pathname;

describe('PKCS#12 keychains', () => {
  it("a keychain of the authority only (keytool's trusted certificate entry): no key, one authority", () => {
    const k = readKeychain(fixture('trust.p12'), 'changeit');
    expect(k.key).toBeUndefined();
    expect(k.cert).toBeUndefined();
    expect(k.trusted.map((c) => c.subject)).toEqual(['CN=epicsperf test authority']);
  });

  it('a client keychain: its key, the certificate that matches it, the authority', () => {
    const k = readKeychain(fixture('client.p12'), 'changeit');
    expect(k.key?.asymmetricKeyType).toBe('rsa');
    expect(k.cert?.subject).toBe('CN=Fred F.');
    expect(k.cert?.checkPrivateKey(k.key!)).toBe(true);
    expect(new Set(k.trusted.map((c) => c.subject))).toEqual(new Set(['CN=epicsperf test authority']));
    expect(k.cert?.verify(k.trusted[0]!.publicKey)).toBe(true);
  });

  it("OpenSSL's older triple-DES encryption and SHA-1 MAC", () => {
    const k = readKeychain(fixture('legacy.p12'), 'legacy1');
    expect(k.cert?.subject).toBe('CN=Fred F.');
    expect(k.cert?.checkPrivateKey(k.key!)).toBe(true);
  });

  it("openssl pkcs12 -export -legacy (OpenSSL 1.1's default): certificates with 40-bit RC2, the key with triple-DES", () => {
    const k = readKeychain(fixture('legacy-rc2.p12'), 'legacy1');
    const des = readKeychain(fixture('legacy.p12'), 'legacy1');
    expect(k.cert?.raw).toEqual(des.cert?.raw);
    expect(k.key?.export({ type: 'pkcs8', format: 'der' })).toEqual(des.key?.export({ type: 'pkcs8', format: 'der' }));
    expect(k.trusted.map((c) => c.subject)).toEqual(['CN=epicsperf test authority']);
    expect(() => readKeychain(fixture('legacy-rc2.p12'), 'legacy2')).toThrow(/wrong password/);
  });

  it('a wrong password and a file that is not a keychain are KeychainErrors saying so', () => {
    expect(() => readKeychain(fixture('client.p12'), 'nope')).toThrow(/wrong password/);
    expect(() => readKeychain(fixture('README.md'), '')).toThrow(KeychainError);
    expect(() => readKeychain(new Uint8Array([0x30, 0x82, 0xff]), '')).toThrow(/not a PKCS#12 keychain/);
  });

  it('TLS settings: the authorities as trust anchors, the key and certificate as the x509 identity', () => {
    const trust = loadPvaTls({ keychain: path('trust.p12'), password: 'changeit', required: false });
    expect(trust.identity).toBeUndefined();
    expect(trust.options.key).toBeUndefined();
    expect(trust.options.ca).toHaveLength(1);
    expect(trust.options.checkServerIdentity?.('x', {} as never)).toBeUndefined();
    const client = loadPvaTls({ keychain: path('client.p12'), password: 'changeit', required: false });
    expect(client.identity).toBe('Fred F.');
    expect(String(client.options.key)).toMatch(/BEGIN PRIVATE KEY/);
    expect(() => loadPvaTls({ keychain: path('nothing.p12'), password: '', required: false })).toThrow(/nothing\.p12: ENOENT/);
  });
});

describe('Secure PV Access settings', () => {
  it('EPICS_PVA_TLS_KEYCHAIN as core-pva writes it (path;password) and as pvxs does (a password file)', () => {
    expect(resolvePvaConfig({ env: {} }).tls).toBeUndefined();
    expect(resolvePvaConfig({ env: { EPICS_PVA_TLS_KEYCHAIN: '/k/client.p12;secret' } }).tls).toEqual({
      keychain: '/k/client.p12',
      password: 'secret',
      required: false,
    });
    const dir = mkdtempSync(join(tmpdir(), 'tls-pwd-'));
    try {
      writeFileSync(join(dir, 'pwd'), 'changeit\n');
      const cfg = resolvePvaConfig({
        env: { EPICS_PVA_TLS_KEYCHAIN: path('client.p12'), EPICS_PVA_TLS_KEYCHAIN_PWD_FILE: join(dir, 'pwd') },
      }).tls!;
      expect(cfg.password).toEqual({ file: join(dir, 'pwd') });
      expect(loadPvaTls(cfg).identity).toBe('Fred F.');
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('without EPICS_PVA_TLS_KEYCHAIN, the keychain of the well-known folder (XDG_CONFIG_HOME, else HOME/.config), as pvxs and core-pva', () => {
    const home = mkdtempSync(join(tmpdir(), 'tls-home-'));
    try {
      expect(resolvePvaConfig({ env: { HOME: home } }).tls).toBeUndefined();
      mkdirSync(join(home, '.config/pva/1.3'), { recursive: true });
      writeFileSync(join(home, '.config/pva/1.3/client.p12'), '');
      expect(resolvePvaConfig({ env: { HOME: home } }).tls?.keychain).toBe(join(home, '.config/pva/1.3/client.p12'));
      mkdirSync(join(home, 'xdg/pva/1.5'), { recursive: true });
      writeFileSync(join(home, 'xdg/pva/1.5/client.p12'), '');
      expect(resolvePvaConfig({ env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') } }).tls?.keychain).toBe(
        join(home, 'xdg/pva/1.5/client.p12'),
      );
      // Defined, even empty, the variable decides; so does the option.
      expect(resolvePvaConfig({ env: { HOME: home, EPICS_PVA_TLS_KEYCHAIN: '' } }).tls).toBeUndefined();
      expect(resolvePvaConfig({ env: { HOME: home }, pvaTlsKeychain: false }).tls).toBeUndefined();
    } finally {
      rmSync(home, { recursive: true });
    }
  });

  it('the Context options override the environment; false turns TLS off', () => {
    const env = { EPICS_PVA_TLS_KEYCHAIN: '/k/a.p12;x' };
    expect(resolvePvaConfig({ env, pvaTlsKeychain: false }).tls).toBeUndefined();
    expect(resolvePvaConfig({ env, pvaTlsKeychain: '/k/b.p12', pvaTlsKeychainPassword: 'y', pvaTlsRequired: true }).tls).toEqual({
      keychain: '/k/b.p12',
      password: 'y',
      required: true,
    });
  });
});

describe('the search', () => {
  it('offers "tls" before "tcp" with a keychain, "tcp" alone without; a reply\'s protocol reaches the manager', async () => {
    const s = dgram.createSocket('udp4');
    const protocols: string[][] = [];
    s.on('message', (msg, from) => {
      const h = emptyHeader();
      if (!readHeader(msg, 0, h)) return;
      const m = decodeMessage(h, msg.subarray(HEADER_SIZE, HEADER_SIZE + h.payloadSize));
      if (m.type !== 'SearchRequest') return;
      protocols.push(m.protocols);
      const reply = encodeMessages([
        {
          type: 'SearchResponse',
          guid: new Uint8Array(12),
          sequenceId: m.sequenceId,
          address: new Uint8Array(16),
          port: 5076,
          protocol: m.protocols[0]!,
          found: true,
          ids: m.channels.map((c) => c.id),
        },
      ]);
      s.send(reply, from.port, from.address);
    });
    await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
    const found: boolean[] = [];
    try {
      for (const keychain of [path('trust.p12'), undefined]) {
        const config = resolvePvaConfig({ pvaAutoAddrList: false, env: keychain ? { EPICS_PVA_TLS_KEYCHAIN: keychain } : {} });
        config.searchDestinations = [{ host: '127.0.0.1', port: s.address().port, broadcast: false }];
        const searcher = new PvaSearcher(
          config,
          (_t, _host, _port, tls) => found.push(tls),
          () => {},
        );
        searcher.add({ cid: 1, name: 'PV:ONE', searchAttempt: 0, searchDueAt: 0, searchQueued: false });
        await new Promise((r) => setTimeout(r, 100));
        searcher.close();
      }
    } finally {
      s.close();
    }
    expect(protocols[0]).toEqual(['tls', 'tcp']);
    expect(protocols.at(-1)).toEqual(['tcp']);
    expect(found).toEqual([true, false]);
  });
});

describe("Node's TLS errors by what they mean", () => {
  it.each([
    ['SELF_SIGNED_CERT_IN_CHAIN', false, 'ERR_EPICS_TLS_UNTRUSTED'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', false, 'ERR_EPICS_TLS_UNTRUSTED'],
    ['CERT_HAS_EXPIRED', true, 'ERR_EPICS_TLS_EXPIRED'],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', false, 'ERR_EPICS_TLS_CERT_REQUIRED'],
    // Java's server answers a missing client certificate with "bad certificate"
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', false, 'ERR_EPICS_TLS_CERT_REQUIRED'],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', true, 'ERR_EPICS_TLS_REFUSED'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', true, 'ERR_EPICS_TLS_REFUSED'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', false, 'ERR_EPICS_TLS'],
  ])('%s (client certificate: %s) is %s', (node, hasCert, code) => {
    const e = tlsErrorOf(
      node,
      '80:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:x.c:1:',
      '127.0.0.1:5076',
      hasCert,
    );
    expect(e.code).toBe(code);
    expect(e.message).toContain('127.0.0.1:5076');
  });
});

describe('the session over TLS', () => {
  it('identifies as "x509" where the server offers it and the client has a certificate, else as "ca"', () => {
    for (const [x509, methods, expected] of [
      [true, ['anonymous', 'ca', 'x509'], 'x509'],
      [true, ['anonymous', 'ca'], 'ca'],
      [false, ['anonymous', 'ca', 'x509'], 'ca'],
    ] as const) {
      const t = session(x509);
      t.feed({ type: 'ConnectionValidationRequest', bufferSize: 65536, registrySize: 32767, authMethods: [...methods] });
      expect(t.s.authMethod).toBe(expected);
    }
  });

  it('a pipelined MONITOR INIT answered by neither its reply nor before an echo sent after it: onInitIgnored', () => {
    const t = session(false);
    t.feed(
      { type: 'ConnectionValidationRequest', bufferSize: 65536, registrySize: 32767, authMethods: ['ca'] },
      { type: 'ConnectionValidated', status: OK },
    );
    t.sent();
    let ignored = 0;
    const h: OpHandler = { onInit: () => {}, onFail: () => {}, onInitIgnored: () => ignored++ };
    const id = t.s.init(Cmd.MONITOR, 7, { type: structure('', {}), value: {} }, h, 16);
    expect(t.s.probeInit(id)).toBe(true);
    expect(t.sent().map((m) => m.type)).toEqual(['OpInitRequest', 'EchoRequest']);
    t.feed({ type: 'EchoResponse', payload: new Uint8Array(0) });
    expect(ignored).toBe(1);
    // answered in time: no probe result
    const id2 = t.s.init(Cmd.MONITOR, 8, { type: structure('', {}), value: {} }, h, 16);
    t.s.probeInit(id2);
    t.feed({
      type: 'OpInitResponse',
      command: Cmd.MONITOR,
      requestId: id2,
      subcommand: Sub.INIT | Sub.PIPELINE,
      status: OK,
      valueType: structure('', {}),
    });
    t.feed({ type: 'EchoResponse', payload: new Uint8Array(0) });
    expect(ignored).toBe(1);
  });

  it('one ignored pipelined INIT: every pipelined monitor INIT of the connection, sent or queued, hears it at once', () => {
    const t = session(false);
    t.feed(
      { type: 'ConnectionValidationRequest', bufferSize: 65536, registrySize: 32767, authMethods: ['ca'] },
      { type: 'ConnectionValidated', status: OK },
    );
    const request = { type: structure('', {}), value: {} };
    const heard: number[] = [];
    const plain = new Set<number>();
    const monitor = (sid: number): void => {
      const h: OpHandler = {
        onInit: () => {},
        onFail: () => {},
        onInitIgnored: () => {
          heard.push(sid);
          t.s.destroy(id);
          plain.add(t.s.init(Cmd.MONITOR, sid, request, { onInit: () => {}, onFail: () => {} }));
        },
      };
      const id = t.s.init(Cmd.MONITOR, sid, request, h, 16);
    };
    for (let sid = 1; sid <= 100; sid++) monitor(sid);
    const first = t.sent().filter((m) => m.type === 'OpInitRequest');
    expect(first).toHaveLength(64); // the window; 36 wait
    expect(t.s.probeInit(first[0]!.requestId)).toBe(true);
    t.sent();
    t.feed({ type: 'EchoResponse', payload: new Uint8Array(0) });
    expect(heard.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const after = t.sent();
    // The 64 sent are destroyed; no pipelined INIT goes out again; the plain INITs fill the window.
    expect(after.filter((m) => m.type === 'DestroyRequest')).toHaveLength(64);
    const inits = after.filter((m) => m.type === 'OpInitRequest');
    expect(inits).toHaveLength(64);
    expect(inits.every((m) => m.type === 'OpInitRequest' && m.subcommand === Sub.INIT && plain.has(m.requestId))).toBe(true);
  });
});
