// Secure PV Access against an independent implementation: core-pva's PVAServer (Phoebus, Java)
// with keychains made by keytool. Get, put and monitor over TLS as "ca" and as "x509" (the
// server says whom it saw; also with the client keychain written again by `openssl pkcs12
// -export -legacy`, RC2 and triple-DES), and each refusal with its code: a server signed by
// another authority, an expired server certificate, a server that requires a client
// certificate, a server without TLS where TLS is required. core-pva's own client is the
// reference in each case. Then this project's server over TLS, read by this client (as "ca" and
// as "x509", the put handler and the access rule seeing the certificate's name) and core-pva's.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context, type ContextOptions } from '../../src/index.js';
import { type Caller, Server, type ServedPv } from '../../src/server/index.js';
import { KEYCHAIN_PASSWORD, makeKeychains, type Keychains } from 'epicsperf-testkit/keychains';
import { corePvaGet, javaReady, startTlsServer, type TlsServer } from 'epicsperf-testkit/tls-server';

const dir = mkdtempSync(join(tmpdir(), 'epics-tls-'));
let kc: Keychains;
const servers: TlsServer[] = [];
const nodeServers: Server[] = [];
const contexts: Context<'pva'>[] = [];

beforeAll(async () => {
  const why = await javaReady();
  if (why) throw new Error(`the Java runners (core-pva's server) cannot be built: ${why}`);
  kc = makeKeychains(dir);
}, 180_000);

afterAll(async () => {
  for (const c of contexts) c.close();
  await Promise.all([...servers.map((s) => s.stop()), ...nodeServers.map((s) => s.close())]);
  rmSync(dir, { recursive: true, force: true });
});

async function server(keychain: string | undefined, options = '', counters = 0): Promise<TlsServer> {
  const s = await startTlsServer(keychain, options, counters);
  servers.push(s);
  return s;
}

/** A PV Access context for server `s` with client keychain `keychain` ("" for none). */
function client(s: Pick<TlsServer, 'clientEnv'>, keychain: string, more: ContextOptions = {}): Context<'pva'> {
  const ctx = new Context({
    protocol: 'pva',
    env: { ...s.clientEnv, EPICS_PVA_TLS_KEYCHAIN: keychain ? `${keychain};${KEYCHAIN_PASSWORD}` : '' },
    ...more,
  });
  contexts.push(ctx);
  return ctx;
}

/**
 * core-pva's client reading TLS:DOUBLE with `keychain`: true when it could (given 10 s, or 4 s
 * where it is `expected` to fail). Run with no Context of this client open: both bind the
 * server's UDP port, and a unicast search reaches only one socket.
 */
async function ref(s: Pick<TlsServer, 'clientEnv'>, keychain: string, expected = true): Promise<boolean> {
  for (const c of contexts.splice(0)) c.close();
  const r = await corePvaGet(s, keychain ? `${keychain};${KEYCHAIN_PASSWORD}` : '', 'TLS:DOUBLE', expected ? 10 : 4);
  if (!r.ok) process.stderr.write(`core-pva's client: ${r.output.split('\n').slice(-3).join(' | ')}\n`);
  return r.ok;
}

describe('Secure PV Access against core-pva', () => {
  it('get, put and monitor over TLS with the "ca" identity (a keychain of the authority only)', async () => {
    const s = await server(kc.server);
    const ctx = client(s, kc.trust);
    await ctx.put('TLS:DOUBLE', 2.5, { timeout: 5000 });
    expect((await ctx.get('TLS:DOUBLE', { timeout: 5000 })).value).toBe(2.5);
    const seen: number[] = [];
    const m = ctx.monitor('TLS:COUNTER', {}, (e) => {
      if (e.kind === 'update') seen.push(e.value as number);
    });
    await waitUntil(() => seen.length >= 3, 5000);
    m.close();
    expect(seen[2]! > seen[0]!).toBe(true);
    await ctx.put('TLS:WHOAMI', 'x', { timeout: 5000 });
    expect((await ctx.get('TLS:WHOAMI')).value).toBe(`ca/${userInfo().username}`);
    expect(ctx.stats().pva?.connections).toEqual([
      { server: expect.stringMatching(/^127\.0\.0\.1:\d+$/), tls: true, identity: 'ca', peer: 'tls-server' },
    ]);
    expect(await ref(s, kc.trust)).toBe(true);
  }, 60_000);

  it('the "x509" identity with a client certificate: the server names the client by its common name', async () => {
    const s = await server(kc.server);
    const ctx = client(s, kc.client);
    await ctx.put('TLS:WHOAMI', 'x', { timeout: 5000 });
    expect((await ctx.get('TLS:WHOAMI')).value).toBe('x509/Fred F.');
    expect(ctx.stats().pva?.connections[0]).toMatchObject({ tls: true, identity: 'x509', as: 'Fred F.', peer: 'tls-server' });
    expect(await ref(s, kc.client)).toBe(true);
  }, 60_000);

  it('the same client keychain written by `openssl pkcs12 -export -legacy` (certificates with 40-bit RC2, the key with triple-DES)', async () => {
    const legacy = join(dir, 'client-legacy.p12');
    const pem = execFileSync('openssl', ['pkcs12', '-in', kc.client, '-passin', `pass:${KEYCHAIN_PASSWORD}`, '-nodes']);
    execFileSync('openssl', ['pkcs12', '-export', '-legacy', '-passout', `pass:${KEYCHAIN_PASSWORD}`, '-out', legacy], { input: pem });
    const s = await server(kc.server);
    const ctx = client(s, legacy);
    await ctx.put('TLS:WHOAMI', 'x', { timeout: 5000 });
    expect((await ctx.get('TLS:WHOAMI')).value).toBe('x509/Fred F.');
    expect(ctx.stats().pva?.connections[0]).toMatchObject({ tls: true, identity: 'x509', as: 'Fred F.', peer: 'tls-server' });
    expect(await ref(s, legacy)).toBe(true);
  }, 60_000);

  it('500 monitors opened at once on core-pva (which ignores pipelined monitors) all start within a few seconds', async () => {
    // core-pva's server ignores a pipelined MONITOR INIT. The first one found out (an echo after
    // it answered first, a second on) turns every monitor of the connection plain at once; each
    // finding out by itself, 64 INITs in flight at a time, took a second per 64.
    const n = 500;
    const s = await server(kc.server, '', n);
    const ctx = client(s, kc.trust);
    const started = new Set<number>();
    const t0 = performance.now();
    const ms = Array.from({ length: n }, (_, i) =>
      ctx.monitor(`TLS:C${i + 1}`, {}, (e) => {
        if (e.kind === 'update') started.add(i);
      }),
    );
    await waitUntil(() => started.size === n, 20_000);
    const took = performance.now() - t0;
    for (const m of ms) m.close();
    expect(started.size).toBe(n);
    expect(took).toBeLessThan(4000);
  }, 60_000);

  it('a server whose certificate another authority signed is refused: ERR_EPICS_TLS_UNTRUSTED', async () => {
    const s = await server(kc.rogueServer);
    await expect(client(s, kc.trust).get('TLS:DOUBLE', { timeout: 2000 })).rejects.toMatchObject({ code: 'ERR_EPICS_TLS_UNTRUSTED' });
    expect(await ref(s, kc.trust, false)).toBe(false);
  }, 60_000);

  it('a server with an expired certificate is refused: ERR_EPICS_TLS_EXPIRED', async () => {
    const s = await server(kc.expiredServer);
    await expect(client(s, kc.trust).get('TLS:DOUBLE', { timeout: 2000 })).rejects.toMatchObject({ code: 'ERR_EPICS_TLS_EXPIRED' });
    expect(await ref(s, kc.trust, false)).toBe(false);
  }, 60_000);

  it('client_cert=require: served with a client certificate, refused without one (ERR_EPICS_TLS_CERT_REQUIRED)', async () => {
    // Served first: core-pva's server does each TLS handshake on its one accepting thread, which
    // exits on any error but a handshake error: "Broken pipe" when a client closes during the
    // handshake (a refused client trying again, then closed). Its TLS port then accepts
    // connections and never completes a handshake: refused first, this test failed one run in ten.
    const s = await server(kc.server, 'client_cert=require');
    expect((await client(s, kc.client).get('TLS:DOUBLE', { timeout: 5000 })).value).toBeTypeOf('number');
    expect(await ref(s, kc.client)).toBe(true);
    await expect(client(s, kc.trust).get('TLS:DOUBLE', { timeout: 2000 })).rejects.toMatchObject({ code: 'ERR_EPICS_TLS_CERT_REQUIRED' });
    expect(await ref(s, kc.trust, false)).toBe(false);
  }, 60_000);

  it('a server without TLS is reached over TCP, or refused when TLS is required (ERR_EPICS_TLS_REQUIRED)', async () => {
    const s = await server(undefined);
    const ctx = client(s, kc.trust);
    expect((await ctx.get('TLS:DOUBLE', { timeout: 5000 })).value).toBeTypeOf('number');
    expect(ctx.stats().pva?.connections[0]).toMatchObject({ tls: false, identity: 'ca' });
    expect(await ref(s, kc.trust)).toBe(true);
    await expect(client(s, kc.trust, { pvaTlsRequired: true }).get('TLS:DOUBLE', { timeout: 2000 })).rejects.toMatchObject({
      code: 'ERR_EPICS_TLS_REQUIRED',
    });
  }, 60_000);

  it('a keychain that cannot be read fails the PV Access call with ERR_EPICS_TLS_KEYCHAIN, naming the file', async () => {
    const s = servers[0] ?? (await server(kc.server));
    const wrong = new Context({ protocol: 'pva', env: { ...s.clientEnv, EPICS_PVA_TLS_KEYCHAIN: `${kc.trust};not-the-password` } });
    contexts.push(wrong);
    await expect(wrong.get('TLS:DOUBLE', { timeout: 1000 })).rejects.toMatchObject({
      code: 'ERR_EPICS_TLS_KEYCHAIN',
      message: expect.stringContaining('wrong password'),
    });
    const missing = client(s, join(dir, 'nothing.p12'));
    await expect(missing.get('TLS:DOUBLE', { timeout: 1000 })).rejects.toMatchObject({
      code: 'ERR_EPICS_TLS_KEYCHAIN',
      message: expect.stringContaining('ENOENT'),
    });
  }, 60_000);
});

interface Served {
  server: Server;
  pv: ServedPv;
  callers: Caller[];
  /** The environment of a client, core-pva's too. */
  clientEnv: Record<string, string>;
}

async function serve(clientCert: 'optional' | 'require' = 'optional'): Promise<Served> {
  const server = await Server.start({
    ca: false,
    pva: { port: 0, udpPort: 0, host: '127.0.0.1', tls: { keychain: kc.server, password: KEYCHAIN_PASSWORD, clientCert, port: 0 } },
  });
  nodeServers.push(server);
  const callers: Caller[] = [];
  const pv = server.pv('TLS:DOUBLE', { value: 1.5 });
  // Written only by a client TLS knows by its certificate.
  server.pv('TLS:GUARDED', { value: 0, access: (peer) => (peer.method === 'x509' ? 'write' : 'read') });
  pv.onPut = ({ peer }) => {
    callers.push(peer);
  };
  const clientEnv = {
    EPICS_PVA_ADDR_LIST: `127.0.0.1:${server.pvaUdpPort}`,
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_BROADCAST_PORT: String(server.pvaUdpPort),
  };
  return { server, pv, callers, clientEnv };
}

describe("Secure PV Access served by this project's server", () => {
  it('as "ca" (a keychain of the authority only): get, put and monitor over TLS; the put handler sees a TLS caller by its user name', async () => {
    const s = await serve();
    expect(s.server.pvaTlsPort).toBeGreaterThan(0);
    const ctx = client(s, kc.trust);
    await ctx.put('TLS:DOUBLE', 2.5, { timeout: 5000 });
    expect((await ctx.get('TLS:DOUBLE', { timeout: 5000 })).value).toBe(2.5);
    const seen: number[] = [];
    const m = ctx.monitor('TLS:DOUBLE', {}, (e) => {
      if (e.kind === 'update') seen.push(e.value as number);
    });
    await new Promise((r) => setTimeout(r, 300));
    s.pv.post(3.5);
    await new Promise((r) => setTimeout(r, 300));
    m.close();
    expect(seen).toEqual([2.5, 3.5]);
    expect(s.callers.at(-1)).toMatchObject({ tls: true, method: 'ca', user: userInfo().username });
    expect(ctx.stats().pva?.connections).toEqual([
      { server: `127.0.0.1:${s.server.pvaTlsPort}`, tls: true, identity: 'ca', peer: 'tls-server' },
    ]);
    await expect(ctx.put('TLS:GUARDED', 1, { timeout: 5000 })).rejects.toThrow(/put not allowed/);
    expect(await ref(s, kc.trust)).toBe(true);
    // Without a keychain: plain TCP, to the TCP port.
    const plain = client(s, '');
    expect((await plain.get('TLS:DOUBLE', { timeout: 5000 })).value).toBe(3.5);
    expect(plain.stats().pva?.connections[0]).toMatchObject({ server: `127.0.0.1:${s.server.pvaPort}`, tls: false });
  }, 60_000);

  it('as "x509" with a client certificate: the put handler sees the name TLS verified', async () => {
    const s = await serve();
    const ctx = client(s, kc.client);
    await ctx.put('TLS:DOUBLE', 4, { timeout: 5000 });
    expect(s.callers.at(-1)).toMatchObject({ tls: true, method: 'x509', user: 'Fred F.' });
    await ctx.put('TLS:GUARDED', 1, { timeout: 5000 });
    expect((await ctx.get('TLS:GUARDED')).value).toBe(1);
    expect(ctx.stats().pva?.connections[0]).toMatchObject({ tls: true, identity: 'x509', as: 'Fred F.' });
    expect(await ref(s, kc.client)).toBe(true);
  }, 60_000);

  it('client_cert=require: served with a client certificate, refused without one (ERR_EPICS_TLS_CERT_REQUIRED)', async () => {
    const s = await serve('require');
    expect((await client(s, kc.client).get('TLS:DOUBLE', { timeout: 5000 })).value).toBe(1.5);
    expect(await ref(s, kc.client)).toBe(true);
    await expect(client(s, kc.trust).get('TLS:DOUBLE', { timeout: 2000 })).rejects.toMatchObject({ code: 'ERR_EPICS_TLS_CERT_REQUIRED' });
    expect(await ref(s, kc.trust, false)).toBe(false);
  }, 60_000);

  it('a server keychain that cannot be read, or that holds no key, fails the start naming the file', async () => {
    const start = (keychain: string, password: string) =>
      Server.start({ ca: false, pva: { port: 0, udpPort: 0, host: '127.0.0.1', tls: { keychain, password, port: 0 } } });
    await expect(start(kc.server, 'wrong')).rejects.toThrow(`server keychain ${kc.server}: wrong password`);
    await expect(start(kc.trust, KEYCHAIN_PASSWORD)).rejects.toThrow(/holds no key and certificate of its own/);
    await expect(start(join(dir, 'none.p12'), '')).rejects.toThrow(/none\.p12: ENOENT/);
  });
});

async function waitUntil(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
