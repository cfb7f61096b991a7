// The PVA searcher's sockets on loopback: an IPv4 destination through the udp4 socket, an IPv6 one
// through the udp6 socket, a multicast group through a socket of its own (interface 127.0.0.1,
// TTL 0: nothing leaves the host); each message carries the port of the socket it came from, the
// unicast flag only for unicast destinations; a reply from ::1 saying "::" is found at ::1.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { HEADER_SIZE } from '../../src/pva/constants.js';
import { emptyHeader, readHeader } from '../../src/pva/header.js';
import { decodeMessage, encodeMessages } from '../../src/pva/messages.js';
import { SearchFlags } from '../../src/pva/messages-session.js';
import { resolvePvaConfig } from '../../src/transport/pva/config.js';
import { PvaSearcher } from '../../src/transport/pva/udp.js';
import { UdpSearcher } from '../../src/transport/ca/udp.js';
import { resolveConfig } from '../../src/transport/ca/config.js';

const GROUP = '239.255.76.76';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

interface Got {
  flags: number;
  replyPort: number;
  fromPort: number;
  from: string;
  names: string[];
}

/** A socket that records the SEARCH requests it is sent; answers "found" (address ::) when `answer`. */
async function listener(type: 'udp4' | 'udp6', host: string, opts: { group?: string; answer?: boolean } = {}) {
  const s = dgram.createSocket({ type, reuseAddr: true });
  const got: Got[] = [];
  const h = emptyHeader();
  s.on('message', (msg, from) => {
    if (!readHeader(msg, 0, h)) return;
    const m = decodeMessage(h, msg.subarray(HEADER_SIZE, HEADER_SIZE + h.payloadSize));
    if (m.type !== 'SearchRequest') return;
    got.push({ flags: m.flags, replyPort: m.responsePort, fromPort: from.port, from: from.address, names: m.channels.map((c) => c.name) });
    if (!opts.answer) return;
    // The protocol core writes the reply: address :: (the client takes the reply's source).
    const reply = encodeMessages([
      {
        type: 'SearchResponse',
        guid: new Uint8Array(12),
        sequenceId: m.sequenceId,
        address: new Uint8Array(16),
        port: 5075,
        protocol: 'tcp',
        found: true,
        ids: m.channels.map((c) => c.id),
      },
    ]);
    s.send(reply, from.port, from.address);
  });
  await new Promise<void>((res) => s.bind(0, opts.group ? '0.0.0.0' : host, res));
  if (opts.group) s.addMembership(opts.group, host);
  cleanup.push(() => s.close());
  return { port: s.address().port, got };
}

describe('PVA search sockets', () => {
  it('IPv4, IPv6 and multicast destinations: each through its socket, with its port and flag', async () => {
    const v4 = await listener('udp4', '127.0.0.1');
    const v6 = await listener('udp6', '::1', { answer: true });
    const mc = await listener('udp4', '127.0.0.1', { group: GROUP });
    const config = resolvePvaConfig({
      pvaAddrList: `127.0.0.1:${v4.port} [::1]:${v6.port} ${GROUP}:${mc.port},0@127.0.0.1`,
      pvaAutoAddrList: false,
      env: {},
    });
    const found: Array<[string, string, number]> = [];
    const searcher = new PvaSearcher(
      config,
      (t, host, port) => found.push([t.name, host, port]),
      () => {},
    );
    cleanup.push(() => searcher.close());
    searcher.add({ cid: 7, name: 'PV:SIX', searchAttempt: 0, searchDueAt: 0, searchQueued: false });
    for (let i = 0; i < 50 && (!found.length || !mc.got.length || !v4.got.length); i++) await sleep(20);

    expect(v4.got[0]).toMatchObject({ flags: SearchFlags.UNICAST, names: ['PV:SIX'] });
    expect(v6.got[0]).toMatchObject({ flags: SearchFlags.UNICAST, from: '::1', names: ['PV:SIX'] });
    expect(mc.got[0]).toMatchObject({ flags: 0, names: ['PV:SIX'] });
    // Each copy names the port it was sent from, and they are three sockets.
    for (const g of [v4.got[0]!, v6.got[0]!, mc.got[0]!]) expect(g.replyPort).toBe(g.fromPort);
    expect(new Set([v4.got[0]!.fromPort, mc.got[0]!.fromPort]).size).toBe(2);
    // The reply said "::": the server is where the reply came from.
    expect(found).toEqual([['PV:SIX', '::1', 5075]]);
    expect(searcher.destinationStats().map((d) => [d.destination, d.failed])).toEqual([
      [`127.0.0.1:${v4.port}`, 0],
      [`[::1]:${v6.port}`, 0],
      [`${GROUP}:${mc.port},0@127.0.0.1`, 0],
    ]);
  });

  it('CA: one udp4 socket for every destination, as before', async () => {
    const seen: number[] = [];
    const sa = dgram.createSocket('udp4');
    const sb = dgram.createSocket('udp4');
    cleanup.push(
      () => sa.close(),
      () => sb.close(),
    );
    for (const [s, arr] of [
      [sa, seen],
      [sb, seen],
    ] as const)
      s.on('message', (_m, r) => arr.push(r.port));
    await Promise.all([new Promise<void>((r) => sa.bind(0, '127.0.0.1', r)), new Promise<void>((r) => sb.bind(0, '127.0.0.1', r))]);
    const config = resolveConfig({
      addrList: [`127.0.0.1:${sa.address().port}`, `127.0.0.1:${sb.address().port}`],
      autoAddrList: false,
      env: {},
    });
    const searcher = new UdpSearcher(config, () => {});
    cleanup.push(() => searcher.close());
    searcher.add({ cid: 1, name: 'PV:ONE', paddedLength: 8, searchAttempt: 0, searchDueAt: 0, searchQueued: false });
    for (let i = 0; i < 50 && seen.length < 2; i++) await sleep(20);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen).size).toBe(1);
  });
});
