// The client circuit against a server circuit in memory (no sockets), search packing and
// backoff, broadcast addresses as a pure function, and a bounded fuzz of the decoders.
import { describe, expect, it } from 'vitest';
import { ClientCircuit, type CircuitChannel } from '../../src/ca/circuit.js';
import {
  DbrType,
  MAX_SEARCH_DATAGRAM,
  decodeDbr,
  decodeRequest,
  parseSearchReplies,
  writeSearchRequest,
  writeSearchVersion,
  decodeResponse,
  emptyHeader,
  encodeMessage,
  ByteWriter,
  type Header,
} from '../../src/ca/index.js';
import { Framer } from '../../src/ca/framer.js';
import { searchRetryDelay } from '../../src/wire/retry.js';
import { broadcastAddresses, parseAddrList, searchDestinations } from '../../src/transport/config.js';
import { ServerCircuit } from '../helpers/ca-fake-server.js';
import { VECTORS } from '../helpers/ca-vectors.js';

/** Wire a client circuit to a server circuit through two framers, splitting bytes at random. */
function pair(seed = 1): { client: ClientCircuit; server: ServerCircuit; pump: () => void; errors: string[] } {
  const errors: string[] = [];
  let rnd = seed;
  const next = (): number => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const server = new ServerCircuit('good');
  const toClient: Uint8Array[] = [];
  const client = new ClientCircuit({ wantFlush: () => {}, protocolError: (r) => errors.push(r) });
  const cf = new Framer(
    (h, p, o) => client.receive(h, p, o),
    (r) => errors.push(r),
  );
  const sf = new Framer(
    (h, p) => {
      const m = decodeRequest(h, p);
      if (m.type !== 'Invalid') toClient.push(server.handle(m));
    },
    (r) => errors.push(r),
  );
  const chop = (b: Uint8Array, f: Framer): void => {
    let i = 0;
    while (i < b.length) {
      const n = 1 + Math.floor(next() * 40);
      f.push(b.slice(i, i + n));
      i += n;
    }
  };
  const pump = (): void => {
    for (let k = 0; k < 10; k++) {
      const out = client.take();
      if (out) chop(out, sf);
      const back = toClient.splice(0);
      for (const b of back) chop(b, cf);
      if (!out && !back.length) return;
    }
  };
  return { client, server, pump, errors };
}

function channel(cid: number, name: string): CircuitChannel & { created?: [number, number, number]; rights?: number } {
  const ch: CircuitChannel & { created?: [number, number, number]; rights?: number } = {
    cid,
    name,
    onCreated: (sid, t, n) => (ch.created = [sid, t, n]),
    onAccessRights: (r) => (ch.rights = r),
    onCreateFailed: () => {},
    onServerDisconnect: () => {},
  };
  return ch;
}

describe('client circuit <-> server circuit in memory', () => {
  it('handshake, channel creation, read, write, subscribe, cancel, close', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { client, server, pump, errors } = pair(seed);
      client.hello(0, 'host', 'user');
      const ch = channel(7, 'MEM:PV');
      client.createChannel(ch);
      pump();
      expect(client.serverVersion).toBe(13);
      expect(ch.rights).toBe(3);
      expect(ch.created?.[1]).toBe(DbrType.DOUBLE);
      const sid = ch.created![0];
      let got: number | undefined;
      client.read(sid, 20, 1, {
        onReply: (h: Header, p: Uint8Array) => (got = decodeDbr(h.dataType, h.dataCount, p)!.value as number),
        onFail: () => {},
      });
      pump();
      expect(got).toBe(42);
      let done = false;
      const payload = new Uint8Array(8);
      new DataView(payload.buffer).setFloat64(0, 6.5);
      client.write(sid, DbrType.DOUBLE, 1, payload, { onReply: () => (done = true), onFail: () => {} });
      pump();
      expect(done).toBe(true);
      expect(server.value).toBe(6.5);
      const seen: number[] = [];
      const subid = client.subscribe(sid, 20, 1, 5, {
        onReply: (h, p) => seen.push(decodeDbr(h.dataType, h.dataCount, p)!.value as number),
        onFail: () => {},
      });
      pump();
      for (const v of [1, 2, 3]) {
        const bytes = server.post(v);
        const f = new Framer(
          (h, p, o) => client.receive(h, p, o),
          () => {},
        );
        f.push(bytes);
      }
      expect(seen).toEqual([6.5, 1, 2, 3]);
      client.unsubscribe(subid, sid, 20, 1);
      pump();
      expect(server.subs.size).toBe(0);
      client.clearChannel(ch, sid);
      pump();
      expect(server.sids.size).toBe(0);
      expect(errors).toEqual([]);
      let failed = '';
      client.read(sid, 20, 1, { onReply: () => {}, onFail: (r) => (failed = r.kind) });
      expect(client.close().length).toBe(0);
      expect(failed).toBe('disconnected');
    }
  });
});

describe('search', () => {
  it('writes a datagram as the searcher does: VERSION with its sequence first, then SEARCH requests', () => {
    const bytes = new Uint8Array(MAX_SEARCH_DATAGRAM);
    const view = new DataView(bytes.buffer);
    let len = writeSearchVersion(view, 0, 5);
    const names = ['TEST:CALC1', 'TEST:ÄÖ', 'A'.repeat(39)];
    names.forEach((n, i) => (len += writeSearchRequest(view, bytes, len, n, 100 + i)));
    const f: Array<ReturnType<typeof decodeRequest>> = [];
    new Framer(
      (h, p) => f.push(decodeRequest(h, p)),
      () => {},
    ).push(bytes.subarray(0, len));
    expect(f[0]).toEqual({ type: 'VersionRequest', priority: 0, version: 13, sequence: 5 });
    expect(f.slice(1)).toEqual(names.map((name, i) => ({ type: 'SearchRequest', name, cid: 100 + i, version: 13, reply: 5 })));
    // The same bytes as the general encoder writes.
    const w = new ByteWriter(len);
    encodeMessage(w, { type: 'VersionRequest', priority: 0, version: 13, sequence: 5 });
    names.forEach((name, i) => encodeMessage(w, { type: 'SearchRequest', name, cid: 100 + i, version: 13, reply: 5 }));
    expect(Buffer.from(w.take())).toEqual(Buffer.from(bytes.subarray(0, len)));
  });

  it('retry delays double from the round-trip estimate and stop at the maximum period', () => {
    const d = [0, 1, 2, 3, 4, 20].map((a) => searchRetryDelay(a, 60_000));
    expect(d.slice(0, 5)).toEqual([32, 64, 128, 256, 512]);
    expect(d[5]).toBe(60_000);
  });

  it('parses a reply datagram: SEARCH answers and the VERSION echo; a malformed tail is reported, not thrown', () => {
    const w = new ByteWriter(64);
    encodeMessage(w, { type: 'VersionResponse', priority: 0, version: 13, sequence: 77 });
    const reply = Buffer.concat([Buffer.from(w.take()), Buffer.from(VECTORS.SearchResponse!, 'hex')]);
    const seen: unknown[] = [];
    const handler = {
      searchReply: (cid: number, address: number, port: number, version: number) => seen.push({ cid, address, port, version }),
      searchVersion: (sequence: number) => seen.push({ sequence }),
    };
    const parse = (b: Uint8Array) => parseSearchReplies(b, new DataView(b.buffer, b.byteOffset, b.length), emptyHeader(), handler);
    expect(parse(reply)).toBe(true);
    expect(seen).toEqual([{ sequence: 77 }, { cid: 7, address: 0x7f000001, port: 5064, version: 13 }]);
    seen.length = 0;
    expect(parse(new Uint8Array([...reply, 0, 6, 0, 99]))).toBe(false);
    expect(seen).toHaveLength(2);
  });
});

describe('configuration helpers (pure)', () => {
  it('broadcast addresses from interface data', () => {
    const ifaces = {
      lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', internal: true }],
      eth0: [
        { address: '192.168.1.17', netmask: '255.255.255.0', family: 'IPv4', internal: false },
        { address: 'fe80::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', internal: false },
      ],
      eth1: [{ address: '10.1.2.3', netmask: '255.255.0.0', family: 4, internal: false }],
    };
    // Loopback is left out, as libca and pvxs leave it out.
    expect(broadcastAddresses(ifaces)).toEqual(['192.168.1.255', '10.1.255.255']);
    // An address with no broadcast domain (/32, /31) has no broadcast address.
    expect(broadcastAddresses({ tun0: [{ address: '10.8.0.6', netmask: '255.255.255.255', family: 'IPv4', internal: false }] })).toEqual(
      [],
    );
  });

  it('search destinations: the list, the broadcast addresses, loopback where there is nothing else', () => {
    const ifaces = {
      lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', internal: true }],
      eth0: [{ address: '198.18.0.2', netmask: '255.255.255.0', family: 'IPv4', internal: false }],
    };
    expect(searchDestinations('198.18.0.1 198.18.0.255:5070 255.255.255.255', true, 5064, ifaces)).toEqual([
      { host: '198.18.0.1', port: 5064, broadcast: false },
      { host: '198.18.0.255', port: 5070, broadcast: true },
      { host: '255.255.255.255', port: 5064, broadcast: true },
      { host: '198.18.0.255', port: 5064, broadcast: true },
    ]);
    // No address list and no interface but loopback: libca searches 127.0.0.1.
    expect(searchDestinations(undefined, true, 5064, { lo: ifaces.lo })).toEqual([{ host: '127.0.0.1', port: 5064, broadcast: false }]);
    // The automatic list off: only the list; a repeat is dropped.
    expect(searchDestinations('10.0.0.1 10.0.0.1:5064', false, 5064, ifaces)).toEqual([{ host: '10.0.0.1', port: 5064, broadcast: false }]);
    expect(searchDestinations(undefined, false, 5064, ifaces)).toEqual([]);
  });

  it('address lists with and without ports', () => {
    expect(parseAddrList('127.0.0.1  localhost:6000 bad:port:x', 5064)).toEqual([
      { host: '127.0.0.1', port: 5064 },
      { host: '127.0.0.1', port: 6000 },
    ]);
  });
});

describe('decoder fuzz', () => {
  it('random and mutated inputs never throw out of the framer and decoders', () => {
    let seed = 12345;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const samples = Object.values(VECTORS).map((h) => new Uint8Array(Buffer.from(h, 'hex')));
    let messages = 0;
    let errors = 0;
    for (let iter = 0; iter < 3000; iter++) {
      let input: Uint8Array;
      if (iter % 3 === 0) {
        input = new Uint8Array(rnd(200)).map(() => rnd(256));
      } else {
        input = samples[rnd(samples.length)]!.slice();
        for (let k = 0, n = 1 + rnd(6); k < n; k++) input[rnd(input.length)] = rnd(256);
        if (rnd(4) === 0) input = input.subarray(0, rnd(input.length));
      }
      const framer = new Framer(
        (h, p) => {
          messages++;
          const r = decodeResponse(h, p);
          const q = decodeRequest(h, p);
          expect(typeof r.type).toBe('string');
          expect(typeof q.type).toBe('string');
          decodeDbr(h.dataType, h.dataCount, p);
          decodeDbr(h.dataType % 35, h.dataCount % 64, p, { asArray: true, longString: true });
        },
        () => errors++,
        4096,
      );
      expect(() => {
        framer.push(input.subarray(0, input.length >> 1));
        framer.push(input.subarray(input.length >> 1));
      }).not.toThrow();
      expect(() =>
        parseSearchReplies(input, new DataView(input.buffer, input.byteOffset, input.length), emptyHeader(), {
          searchReply: () => {},
          searchVersion: () => {},
        }),
      ).not.toThrow();
    }
    expect(messages).toBeGreaterThan(1000);
    expect(errors).toBeGreaterThan(0);
    const h = emptyHeader();
    expect(decodeDbr(6, 2 ** 31, new Uint8Array(8))).toBeUndefined();
    void h;
  });
});
