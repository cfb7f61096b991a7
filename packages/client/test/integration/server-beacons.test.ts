// The servers' beacons: CA's RSRV_IS_UP and PV Access's BEACON reach the beacon addresses, naming
// the server's TCP port (and over PVA its GUID), decoded by the client's own decoders.
import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { decodeResponse, readHeader as readCaHeader, emptyHeader as emptyCaHeader } from '../../src/ca/index.js';
import { decodeMessage, emptyHeader, readHeader } from '../../src/pva/index.js';
import { Server } from '../../src/server/index.js';

async function listener(host = '127.0.0.1'): Promise<{ port: number; next: () => Promise<Buffer>; close: () => void }> {
  const s = dgram.createSocket('udp4');
  const queue: Buffer[] = [];
  const waiting: ((b: Buffer) => void)[] = [];
  s.on('message', (m) => (waiting.length ? waiting.shift()!(m) : queue.push(m)));
  await new Promise<void>((r) => s.bind(0, host, r));
  return {
    port: s.address().port,
    next: () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((r) => waiting.push(r))),
    close: () => s.close(),
  };
}

describe('server beacons', () => {
  it('CA beacons and PV Access beacons go to the beacon addresses with the server port', async () => {
    const ca = await listener();
    const pva = await listener();
    const server = await Server.start({
      ca: { port: 0, host: '127.0.0.1', beaconAddresses: [`127.0.0.1:${ca.port}`] },
      pva: { port: 0, udpPort: 0, host: '127.0.0.1', beaconAddresses: [`127.0.0.1:${pva.port}`] },
    });
    try {
      const caBytes = new Uint8Array(await ca.next());
      const h = emptyCaHeader();
      const size = readCaHeader(new DataView(caBytes.buffer, caBytes.byteOffset), 0, caBytes.length, h);
      const b = decodeResponse(h, caBytes.subarray(size, size + h.payloadSize));
      expect(b).toMatchObject({ type: 'Beacon', port: server.caPort });
      // The next ones come sooner than the period at first (0.02 s doubling), as RSRV's do.
      const t0 = Date.now();
      await ca.next();
      expect(Date.now() - t0).toBeLessThan(1000);
      const pvaBytes = new Uint8Array(await pva.next());
      const ph = emptyHeader();
      readHeader(pvaBytes, 0, ph);
      const m = decodeMessage(ph, pvaBytes.subarray(8, 8 + ph.payloadSize));
      expect(m).toMatchObject({ type: 'Beacon', port: server.pvaPort });
    } finally {
      await server.close();
      ca.close();
      pva.close();
    }
  });

  it('beacons to a broadcast address go out (the socket may broadcast)', async () => {
    const ca = await listener('127.255.255.255');
    const pva = await listener('127.255.255.255');
    const server = await Server.start({
      ca: { port: 0, host: '127.0.0.1', beaconAddresses: [`127.255.255.255:${ca.port}`] },
      pva: { port: 0, udpPort: 0, host: '127.0.0.1', beaconAddresses: [`127.255.255.255:${pva.port}`] },
    });
    try {
      const within = <T>(p: Promise<T>) =>
        Promise.race([p, new Promise<never>((_, no) => setTimeout(() => no(new Error('no beacon in 2 s')), 2000))]);
      expect((await within(ca.next())).length).toBeGreaterThan(0);
      expect((await within(pva.next())).length).toBeGreaterThan(0);
    } finally {
      await server.close();
      ca.close();
      pva.close();
    }
  });
});
