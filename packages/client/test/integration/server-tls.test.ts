// Secure PV Access served by the TypeScript server, with keychains made by keytool as core-pva's
// TLS.md shows: this library's client over TLS as "ca" and as "x509" (the put handler sees the
// certificate's name), client certificates required, core-pva's client as the reference, plain
// TCP for a client without a keychain, and a server keychain that cannot be read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/index.js';
import { type Caller, Server, type ServedPv } from '../../src/server/index.js';
import { KEYCHAIN_PASSWORD, makeKeychains, type Keychains } from 'epicsperf-testkit/keychains';
import { corePvaGet, javaReady } from 'epicsperf-testkit/tls-server';

const dir = mkdtempSync(join(tmpdir(), 'epics-server-tls-'));
let kc: Keychains;
const servers: Server[] = [];
const contexts: Context<'pva'>[] = [];

beforeAll(async () => {
  const why = await javaReady();
  if (why) throw new Error(`the Java runners (core-pva's client) cannot be built: ${why}`);
  kc = makeKeychains(dir);
}, 180_000);

afterAll(async () => {
  for (const c of contexts) c.close();
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

interface Served {
  server: Server;
  pv: ServedPv;
  callers: Caller[];
  /** The environment of a client, core-pva's too. */
  env: Record<string, string>;
}

async function serve(clientCert: 'optional' | 'require' = 'optional'): Promise<Served> {
  const server = await Server.start({
    ca: false,
    pva: { port: 0, udpPort: 0, host: '127.0.0.1', tls: { keychain: kc.server, password: KEYCHAIN_PASSWORD, clientCert, port: 0 } },
  });
  servers.push(server);
  const callers: Caller[] = [];
  const pv = server.pv('TLS:DOUBLE', { value: 1.5 });
  // Written only by a client TLS knows by its certificate.
  server.pv('TLS:GUARDED', { value: 0, access: (peer) => (peer.method === 'x509' ? 'write' : 'read') });
  pv.onPut = ({ peer }) => {
    callers.push(peer);
  };
  const env = {
    EPICS_PVA_ADDR_LIST: `127.0.0.1:${server.pvaUdpPort}`,
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_BROADCAST_PORT: String(server.pvaUdpPort),
  };
  return { server, pv, callers, env };
}

function client(s: Served, keychain: string): Context<'pva'> {
  const ctx = new Context({
    protocol: 'pva',
    env: { ...s.env, EPICS_PVA_TLS_KEYCHAIN: keychain ? `${keychain};${KEYCHAIN_PASSWORD}` : '' },
  });
  contexts.push(ctx);
  return ctx;
}

/** core-pva's client reading TLS:DOUBLE with `keychain` ("" for none), no Context of this library open. */
async function ref(s: Served, keychain: string, expected = true): Promise<boolean> {
  for (const c of contexts.splice(0)) c.close();
  const r = await corePvaGet({ clientEnv: s.env }, keychain ? `${keychain};${KEYCHAIN_PASSWORD}` : '', 'TLS:DOUBLE', expected ? 10 : 4);
  if (!r.ok && expected) process.stderr.write(`core-pva's client: ${r.output.split('\n').slice(-3).join(' | ')}\n`);
  return r.ok;
}

describe('the PV Access server over TLS', () => {
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
