// CA name servers without an IOC: EPICS_CA_NAME_SERVERS and the caNameServers option parsed; the
// circuit's version and search-reply events; the searcher with no UDP destination (no socket, its
// SEARCH requests handed to the name servers, first answer wins); a Context whose name server is
// away (no UDP, no warning of missing destinations, the name times out); and a name server too old
// for searches over TCP (a fake: the real IOC speaks 4.13), which is never sent one.
import dgram from 'node:dgram';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from 'epicsperf-testkit/wait';
import { ByteWriter, decodeRequest, encodeMessage, type RequestMessage } from '../../src/ca/index.js';
import { ClientCircuit } from '../../src/ca/circuit.js';
import { Framer } from '../../src/ca/framer.js';
import { Context, NotFoundError } from '../../src/index.js';
import { resolveConfig } from '../../src/transport/ca/config.js';
import { UdpSearcher, type SearchTarget } from '../../src/transport/ca/udp.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Decode a byte stream of requests with the protocol core. */
function requests(bytes: Uint8Array): RequestMessage[] {
  const out: RequestMessage[] = [];
  new Framer(
    (h, p) => {
      const m = decodeRequest(h, p);
      if (m.type !== 'Invalid') out.push(m);
    },
    (r) => {
      throw new Error(r);
    },
  ).push(bytes);
  return out;
}

function target(cid: number, name: string): SearchTarget {
  return { cid, name, paddedLength: (name.length + 8) & ~7, searchAttempt: 0, searchDueAt: 0, searchQueued: false };
}

describe('configuration', () => {
  it('reads EPICS_CA_NAME_SERVERS: whitespace-separated host[:port], the server port by default, no repeats', () => {
    const c = resolveConfig({ env: { EPICS_CA_NAME_SERVERS: ' 10.0.0.1  ioc2:6000\t10.0.0.1:5064 localhost ' } });
    expect(c.nameServers).toEqual([
      { host: '10.0.0.1', port: 5064 },
      { host: 'ioc2', port: 6000 },
      { host: '127.0.0.1', port: 5064 },
    ]);
    const p = resolveConfig({ env: { EPICS_CA_NAME_SERVERS: '198.18.0.1', EPICS_CA_SERVER_PORT: '7064' } });
    expect(p.nameServers).toEqual([{ host: '198.18.0.1', port: 7064 }]);
    expect(resolveConfig({ env: {} }).nameServers).toEqual([]);
  });

  it('the caNameServers option (a list or a string) takes precedence over the environment', () => {
    const env = { EPICS_CA_NAME_SERVERS: '10.0.0.1' };
    expect(resolveConfig({ env, caNameServers: ['10.9.9.9:5999'] }).nameServers).toEqual([{ host: '10.9.9.9', port: 5999 }]);
    expect(resolveConfig({ env, caNameServers: '10.9.9.8 10.9.9.7:1' }).nameServers).toEqual([
      { host: '10.9.9.8', port: 5064 },
      { host: '10.9.9.7', port: 1 },
    ]);
    expect(resolveConfig({ env, caNameServers: [] }).nameServers).toEqual([]);
  });
});

describe('the circuit of a name server', () => {
  it('tells the server version and the SEARCH replies, and sends SEARCH requests already encoded', () => {
    const versions: number[] = [];
    const replies: number[][] = [];
    const c = new ClientCircuit({
      wantFlush: () => {},
      protocolError: (r) => {
        throw new Error(r);
      },
      version: (v) => versions.push(v),
      searchReply: (cid, address, port) => replies.push([cid, address, port]),
    });
    c.hello(0, 'host', 'user');
    const w = new ByteWriter();
    encodeMessage(w, { type: 'SearchRequest', name: 'A:B', cid: 7, version: 13, reply: 5 });
    c.sendEncoded(w.take());
    expect(requests(c.take()!).map((m) => m.type)).toEqual(['VersionRequest', 'HostNameRequest', 'ClientNameRequest', 'SearchRequest']);

    // What RSRV sends: its VERSION as the circuit opens, then a SEARCH reply without payload.
    const s = new ByteWriter();
    encodeMessage(s, { type: 'VersionResponse', priority: 0, version: 13, sequence: 0 });
    const bytes = s.take();
    const reply = new Uint8Array(16);
    new DataView(reply.buffer).setUint16(0, 6); // SEARCH
    new DataView(reply.buffer).setUint16(4, 5064);
    new DataView(reply.buffer).setUint32(8, 0xffffffff);
    new DataView(reply.buffer).setUint32(12, 7);
    new Framer(
      (h, p, o) => c.receive(h, p, o),
      (r) => {
        throw new Error(r);
      },
    ).push(new Uint8Array([...bytes, ...reply]));
    expect(versions).toEqual([13]);
    expect(replies).toEqual([[7, 0xffffffff, 5064]]);
  });
});

describe('the searcher with no UDP destination', () => {
  it('makes no socket, hands every SEARCH to the name servers, retries there, and takes the first answer', async () => {
    const sockets = vi.spyOn(dgram, 'createSocket');
    const config = resolveConfig({ addrList: [], autoAddrList: false, caNameServers: '198.18.0.1', env: {} });
    const sent: Array<{ names: string[]; count: number }> = [];
    const found: Array<[number, number, number, string]> = [];
    const s = new UdpSearcher(
      config,
      (t, a, p, from) => found.push([t.cid, a, p, from]),
      (bytes, count) => {
        const ms = requests(bytes);
        expect(ms.every((m) => m.type === 'SearchRequest' && m.reply === 5 && m.version === 13)).toBe(true);
        sent.push({ names: ms.map((m) => (m as { name: string }).name), count });
      },
    );
    try {
      const a = target(1, 'A');
      const b = target(2, 'B:LONGER:NAME');
      s.add(a);
      s.add(b);
      await new Promise((r) => setImmediate(r));
      expect(sent).toEqual([{ names: ['A', 'B:LONGER:NAME'], count: 2 }]);
      // An answer naming the name server's host (the wildcard address), then a late second answer.
      s.foundOverTcp(1, 0xffffffff, 5064, '198.18.0.1');
      s.foundOverTcp(1, 0x0a000001, 5064, '198.18.0.2');
      expect(found).toEqual([[1, 0xffffffff, 5064, '198.18.0.1']]);
      // The retry schedule applies over TCP too: B goes out again, A does not.
      await waitFor(() => sent.length >= 2, 5000, 'a retry over TCP');
      for (const x of sent.slice(1)) expect(x.names).toEqual(['B:LONGER:NAME']);
      expect(s.datagramsSent).toBe(0);
      expect(sockets).not.toHaveBeenCalled();
    } finally {
      s.close();
    }
  });
});

/** A TCP port with nothing listening on it (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('a Context searching over name servers alone', () => {
  it('uses no UDP, warns of no missing destination, and a name times out when its name server is away', async () => {
    const sockets = vi.spyOn(dgram, 'createSocket');
    const warnings: string[] = [];
    const onWarn = (m: unknown): void => void warnings.push((m as { msg: string }).msg);
    subscribe('epics-client:log:warn', onWarn);
    const port = await closedPort();
    const ctx = new Context({ addrList: [], autoAddrList: false, caNameServers: [`127.0.0.1:${port}`], env: {} });
    try {
      await expect(ctx.get('NS:AWAY', { timeout: 300 })).rejects.toBeInstanceOf(NotFoundError);
      const [r] = await ctx.snapshot(['NS:AWAY:TOO'], { timeout: 300 });
      expect(r).toMatchObject({ ok: false, code: 'ERR_EPICS_NOT_FOUND' });
      expect(ctx.stats().nameServers).toEqual([{ server: `127.0.0.1:${port}`, connected: false, searchesSent: 0, answers: 0 }]);
      expect(sockets).not.toHaveBeenCalled();
      expect(warnings.filter((w) => /no search destinations/.test(w))).toEqual([]);
      // The refused connection is told once, not at every retry.
      expect(warnings.filter((w) => w.includes(`127.0.0.1:${port}`))).toHaveLength(1);
    } finally {
      unsubscribe('epics-client:log:warn', onWarn);
      await ctx.close();
    }
  });

  it('sends no SEARCH to a name server older than CA 4.12', async () => {
    const got: string[] = [];
    const srv = net.createServer((sock) => {
      const w = new ByteWriter();
      encodeMessage(w, { type: 'VersionResponse', priority: 0, version: 11, sequence: 0 });
      sock.write(w.take());
      sock.on('data', (d) => void got.push(...requests(d).map((m) => m.type)));
      sock.on('error', () => {});
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    const warnings: string[] = [];
    const onWarn = (m: unknown): void => void warnings.push((m as { msg: string }).msg);
    subscribe('epics-client:log:warn', onWarn);
    const ctx = new Context({ addrList: [], autoAddrList: false, caNameServers: [`127.0.0.1:${port}`], env: {} });
    try {
      await expect(ctx.get('NS:OLD', { timeout: 400 })).rejects.toBeInstanceOf(NotFoundError);
      expect(got).toEqual(['VersionRequest', 'HostNameRequest', 'ClientNameRequest']);
      // Connected, but not to a name server: it takes no search.
      expect(ctx.stats().nameServers[0]).toMatchObject({ connected: false, searchesSent: 0 });
      expect(warnings).toEqual([`CA name server 127.0.0.1:${port} speaks CA 4.11: it takes no search over TCP (4.12 or later does)`]);
    } finally {
      unsubscribe('epics-client:log:warn', onWarn);
      await ctx.close();
      await new Promise((r) => srv.close(r));
    }
  });
});
