// A minimal CA server for tests (127.0.0.1 only): the server side of a circuit written with the
// protocol core, plus UDP name resolution and TCP circuits that can misbehave on purpose.
import dgram from 'node:dgram';
import net from 'node:net';
import { ByteWriter, DbrType, ECA_NORMAL, decodeRequest, encodeDbr, encodeMessage, type RequestMessage } from '../../src/ca/index.js';
import { Framer } from '../../src/ca/framer.js';

export type Mode = 'good' | 'truncated' | 'absurd' | 'unknown' | 'silent' | 'garbage';

/** Server side of one circuit: requests in, response bytes out. */
export class ServerCircuit {
  private readonly out = new ByteWriter();
  private nextSid = 100;
  readonly sids = new Map<number, { cid: number; name: string }>();
  readonly subs = new Map<number, { sid: number; dataType: number; count: number }>();
  value = 42;
  constructor(private readonly mode: Mode = 'good') {}

  /** Handle one request; returns the bytes to send (possibly none). */
  handle(m: RequestMessage): Uint8Array {
    const w = this.out;
    switch (m.type) {
      case 'VersionRequest':
        encodeMessage(w, { type: 'VersionResponse', version: 13, priority: 0, sequence: 0 });
        break;
      case 'CreateChanRequest': {
        const sid = this.nextSid++;
        this.sids.set(sid, { cid: m.cid, name: m.name });
        encodeMessage(w, { type: 'AccessRightsResponse', cid: m.cid, rights: 3 });
        encodeMessage(w, { type: 'CreateChanResponse', dataType: DbrType.DOUBLE, count: 1, cid: m.cid, sid });
        break;
      }
      case 'ReadNotifyRequest':
        this.reply(w, m.dataType, m.ioid, 'read');
        break;
      case 'EventAddRequest':
        this.subs.set(m.subscriptionId, { sid: m.sid, dataType: m.dataType, count: m.count });
        this.reply(w, m.dataType, m.subscriptionId, 'event');
        break;
      case 'EventCancelRequest':
        this.subs.delete(m.subscriptionId);
        encodeMessage(w, {
          type: 'EventAddResponse',
          dataType: m.dataType,
          count: m.count,
          status: ECA_NORMAL,
          subscriptionId: m.subscriptionId,
          payload: new Uint8Array(0),
        });
        break;
      case 'WriteNotifyRequest':
        this.value = new DataView(m.payload.buffer, m.payload.byteOffset).getFloat64(0);
        encodeMessage(w, { type: 'WriteNotifyResponse', dataType: m.dataType, count: m.count, status: ECA_NORMAL, ioid: m.ioid });
        break;
      case 'EchoRequest':
        if (this.mode !== 'silent') encodeMessage(w, { type: 'EchoResponse' });
        break;
      case 'ClearChannelRequest':
        this.sids.delete(m.sid);
        encodeMessage(w, { type: 'ClearChannelResponse', sid: m.sid, cid: m.cid });
        break;
      default:
        break;
    }
    return w.take();
  }

  /** Post a new value to every subscription. */
  post(value: number): Uint8Array {
    this.value = value;
    for (const [id, s] of this.subs) this.reply(this.out, s.dataType, id, 'event');
    return this.out.take();
  }

  private reply(w: ByteWriter, dataType: number, id: number, kind: 'read' | 'event'): void {
    if (this.mode === 'silent' && kind === 'read') return;
    if (this.mode === 'truncated') {
      // A header announcing 24 bytes, then only 8 of them.
      const full = new ByteWriter();
      encodeMessage(full, { type: 'ReadNotifyResponse', dataType, count: 1, status: ECA_NORMAL, ioid: id, payload: new Uint8Array(24) });
      const b = full.take().subarray(0, 16 + 8);
      const off = w.reserve(b.length);
      w.bytes.set(b, off);
      return;
    }
    if (this.mode === 'absurd') {
      const off = w.reserve(24);
      const v = w.dataView;
      v.setUint16(off, 15);
      v.setUint16(off + 2, 0xffff);
      v.setUint16(off + 4, dataType);
      v.setUint16(off + 6, 0);
      v.setUint32(off + 8, 1);
      v.setUint32(off + 12, id);
      v.setUint32(off + 16, 0xfffffff0);
      v.setUint32(off + 20, 1);
      return;
    }
    if (this.mode === 'unknown') {
      const off = w.reserve(16);
      w.dataView.setUint16(off, 99);
      return;
    }
    const { payload, count } = encodeDbr(dataType, this.value, { severity: 1, status: 3, secondsPastEpoch: 1000, nanoseconds: 5 });
    if (kind === 'read') encodeMessage(w, { type: 'ReadNotifyResponse', dataType, count, status: ECA_NORMAL, ioid: id, payload });
    else encodeMessage(w, { type: 'EventAddResponse', dataType, count, status: ECA_NORMAL, subscriptionId: id, payload });
  }
}

/** One TCP server on 127.0.0.1 with its own behaviour. */
export class FakeTcpServer {
  readonly server = net.createServer((s) => this.accept(s));
  readonly sockets = new Set<net.Socket>();
  readonly circuits: ServerCircuit[] = [];
  port = 0;
  constructor(readonly mode: Mode) {}

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => {});
    const sc = new ServerCircuit(this.mode);
    this.circuits.push(sc);
    if (this.mode === 'garbage') {
      s.write(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'));
    }
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type === 'Invalid') return;
        const out = sc.handle(m);
        if (out.length && !s.destroyed) s.write(out);
      },
      () => s.destroy(),
    );
    s.on('data', (d) => framer.push(d));
  }

  /** Send bytes on every open circuit. */
  broadcast(f: (c: ServerCircuit) => Uint8Array): void {
    let i = 0;
    for (const s of this.sockets) {
      const c = this.circuits[i++];
      if (c) s.write(f(c));
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** UDP name server on 127.0.0.1: answers a search for `name` with the TCP port it maps to. */
export class FakeNameServer {
  readonly socket = dgram.createSocket('udp4');
  readonly names = new Map<string, number>();
  port = 0;
  /** Reply datagrams to send for any request (for hostile UDP tests); undefined = normal answers. */
  rawReply: Uint8Array | undefined;

  async listen(): Promise<void> {
    this.socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo));
    await new Promise<void>((r) => this.socket.bind(0, '127.0.0.1', r));
    this.port = this.socket.address().port;
  }

  private onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (rinfo.address !== '127.0.0.1') return;
    if (this.rawReply) {
      this.socket.send(this.rawReply, rinfo.port, '127.0.0.1');
      return;
    }
    const w = new ByteWriter();
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type === 'VersionRequest') encodeMessage(w, { type: 'VersionResponse', version: 13, priority: 1, sequence: m.sequence ?? 0 });
        if (m.type === 'SearchRequest') {
          const port = this.names.get(m.name);
          if (port) encodeMessage(w, { type: 'SearchResponse', port, address: 0xffffffff, cid: m.cid, version: 13 });
        }
      },
      () => {},
    );
    framer.push(msg);
    if (w.length > 16) this.socket.send(w.take(), rinfo.port, '127.0.0.1');
  }

  close(): void {
    this.socket.close();
  }
}
