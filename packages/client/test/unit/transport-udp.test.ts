// The UDP name resolver against a plain UDP socket that plays the server's search side: names
// packed into full datagrams, held to full datagrams while corked, the window of datagrams in
// flight, the first answer winning; and what each search destination is sent and refused.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { ByteWriter, decodeRequest, encodeMessage } from '../../src/ca/index.js';
import { Framer } from '../../src/ca/framer.js';
import { HEADER_SIZE as PVA_HEADER_SIZE } from '../../src/pva/constants.js';
import { emptyHeader, readHeader } from '../../src/pva/header.js';
import { decodeMessage } from '../../src/pva/messages.js';
import { SearchFlags } from '../../src/pva/messages-session.js';
import { resolveConfig } from '../../src/transport/ca/config.js';
import { resolvePvaConfig } from '../../src/transport/pva/config.js';
import { PvaSearcher } from '../../src/transport/pva/udp.js';
import { UdpSearcher, type SearchTarget } from '../../src/transport/ca/udp.js';

interface Server {
  port: number;
  /** Names of each datagram received, in order. */
  datagrams: string[][];
  close(): void;
}

/** A search responder: answers every name it is sent (unless `silent`) and echoes the sequence. */
async function searchServer(opts: { silent?: boolean } = {}): Promise<Server> {
  const s = dgram.createSocket('udp4');
  const datagrams: string[][] = [];
  s.on('message', (msg, from) => {
    // The protocol core reads the requests and writes the replies.
    const names: string[] = [];
    const w = new ByteWriter(msg.length * 2);
    new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type === 'VersionRequest') encodeMessage(w, { type: 'VersionResponse', priority: 0, version: 13, sequence: m.sequence ?? 0 });
        else if (m.type === 'SearchRequest') {
          names.push(m.name);
          encodeMessage(w, { type: 'SearchResponse', port: 5064, address: 0xffffffff, cid: m.cid, version: 13 });
        }
      },
      () => {},
    ).push(msg);
    datagrams.push(names);
    if (!opts.silent) s.send(w.take(), from.port, from.address);
  });
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
  return { port: s.address().port, datagrams, close: () => s.close() };
}

function target(cid: number, name: string): SearchTarget {
  return { cid, name, paddedLength: (name.length + 8) & ~7, searchAttempt: 0, searchDueAt: 0, searchQueued: false };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

async function setup(opts: { silent?: boolean; searchWindow?: number } = {}) {
  const server = await searchServer(opts);
  const found = new Map<number, number>();
  const searcher = new UdpSearcher(
    resolveConfig({ addrList: `127.0.0.1:${server.port}`, autoAddrList: false, env: {}, searchWindow: opts.searchWindow }),
    (t) => found.set(t.cid, (found.get(t.cid) ?? 0) + 1),
  );
  cleanup.push(
    () => searcher.close(),
    () => server.close(),
  );
  return { server, searcher, found };
}

// 32 bytes per name on the wire (16-byte header + "PV:NAME:0000nnn" padded to 16): 255 fit an
// 8 KB loopback datagram after its 16-byte VERSION.
const names = (n: number, from = 0): SearchTarget[] =>
  Array.from({ length: n }, (_, i) => target(from + i + 1, `PV:NAME:${String(from + i).padStart(7, '0')}`));

describe('UDP search', () => {
  it('packs names into full datagrams, and every name is found once', async () => {
    const { server, searcher, found } = await setup();
    for (const t of names(1000)) searcher.add(t);
    await sleep(200);
    // The first round: 1000 names in four datagrams, the first three full. On a loaded machine a
    // retry of a name still unanswered may fill the rest of the fourth, so it holds 235 to 255.
    const seen = new Set<string>();
    let round = 0;
    while (seen.size < 1000 && round < server.datagrams.length) for (const n of server.datagrams[round++]!) seen.add(n);
    expect(round).toBe(4);
    expect(server.datagrams.slice(0, 3).map((d) => d.length)).toEqual([255, 255, 255]);
    expect(server.datagrams[3]!.length).toBeGreaterThanOrEqual(235);
    expect(server.datagrams[3]!.length).toBeLessThanOrEqual(255);
    expect(found.size).toBe(1000);
    expect([...found.values()].every((n) => n === 1)).toBe(true);
    expect(searcher.searching).toBe(0);
  });

  it('names added over several turns go out in partial datagrams unless corked', async () => {
    const plain = await setup();
    for (let k = 0; k < 4; k++) {
      for (const t of names(100, k * 100)) plain.searcher.add(t);
      await turn();
    }
    const corked = await setup();
    corked.searcher.cork();
    for (let k = 0; k < 4; k++) {
      for (const t of names(100, k * 100)) corked.searcher.add(t);
      await turn();
    }
    await sleep(50);
    // Held to full datagrams: nothing of the last 145 names has gone out before uncork().
    expect(corked.server.datagrams.flat().length).toBe(255);
    corked.searcher.uncork();
    await sleep(100);
    expect(plain.server.datagrams.slice(0, 4).map((d) => d.length)).toEqual([100, 100, 100, 100]);
    expect(corked.server.datagrams.slice(0, 2).map((d) => d.length)).toEqual([255, 145]);
    expect(corked.found.size).toBe(400);
  });

  it('a silent server holds the window: unanswered datagrams free it only as they expire', async () => {
    // A window of 5 x 1450 bytes: one 8 KB datagram in flight at a time.
    const { server, searcher } = await setup({ silent: true, searchWindow: 5 });
    for (const t of names(1000)) searcher.add(t);
    await turn();
    expect(server.datagrams.length).toBe(1);
    await sleep(150);
    // Slots expire after 20 ms or more: the rest follows, paced, not at once.
    expect(server.datagrams.flat().length).toBeGreaterThan(255);
    expect(server.datagrams.length).toBeLessThan(12);
    expect(searcher.searching).toBe(1000);
  });
});

describe('search destinations', () => {
  /** A UDP socket that keeps the SEARCH messages it receives (flags and names). */
  async function pvaListener(): Promise<{ port: number; got: { flags: number; names: string[] }[]; close(): void }> {
    const s = dgram.createSocket('udp4');
    const got: { flags: number; names: string[] }[] = [];
    s.on('message', (msg) => {
      const h = emptyHeader();
      if (!readHeader(msg, 0, h)) return;
      const m = decodeMessage(h, msg.subarray(PVA_HEADER_SIZE, PVA_HEADER_SIZE + h.payloadSize));
      if (m.type === 'SearchRequest') got.push({ flags: m.flags, names: m.channels.map((c) => c.name) });
    });
    await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
    return { port: s.address().port, got, close: () => s.close() };
  }

  it('PVA: a broadcast destination is sent the search without the unicast flag, others with it', async () => {
    const bcast = await pvaListener();
    const ucast = await pvaListener();
    const config = resolvePvaConfig({ pvaAddrList: [], pvaAutoAddrList: false, env: {} });
    config.searchDestinations = [
      { host: '127.0.0.1', port: bcast.port, broadcast: true },
      { host: '127.0.0.1', port: ucast.port, broadcast: false },
    ];
    const searcher = new PvaSearcher(
      config,
      () => {},
      () => {},
    );
    cleanup.push(
      () => searcher.close(),
      () => bcast.close(),
      () => ucast.close(),
    );
    searcher.add({ cid: 1, name: 'PV:ONE', searchAttempt: 0, searchDueAt: 0, searchQueued: false });
    await sleep(100);
    expect(bcast.got[0]).toEqual({ flags: 0, names: ['PV:ONE'] });
    expect(ucast.got[0]).toEqual({ flags: SearchFlags.UNICAST, names: ['PV:ONE'] });
    expect(searcher.destinationStats().map((d) => [d.broadcast, d.sent >= 1, d.failed])).toEqual([
      [true, true, 0],
      [false, true, 0],
    ]);
  });

  it('CA: a send the system refuses is counted for its destination, the others go on', async () => {
    const server = await searchServer({ silent: true });
    cleanup.push(() => server.close());
    // Node refuses port 0 before any system call, with no datagram on any network (the namespace
    // test packages/epicsperf/test/integration/network.test.ts has the system refuse one: EACCES).
    const config = resolveConfig({ addrList: `127.0.0.1:${server.port}`, autoAddrList: false, env: {} });
    config.searchDestinations.unshift({ host: '127.0.0.1', port: 0, broadcast: false });
    const searcher = new UdpSearcher(config, () => {});
    cleanup.push(() => searcher.close());
    searcher.add(target(1, 'PV:ONE'));
    await sleep(200);
    const [bad, good] = searcher.destinationStats();
    expect(bad).toMatchObject({ destination: '127.0.0.1:0', sent: 0 });
    expect(bad!.failed).toBeGreaterThanOrEqual(1);
    expect(bad!.lastError).toBe('ERR_SOCKET_BAD_PORT');
    expect(good).toMatchObject({ destination: `127.0.0.1:${server.port}`, failed: 0 });
    expect(good!.sent).toBe(server.datagrams.length);
  });
});
