// The PV Access server's I/O: a TCP listener whose connections run PvaServerCircuit, and a UDP
// socket on the broadcast port answering searches for the names the provider has.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import { DEFAULT_BROADCAST_PORT, DEFAULT_SERVER_PORT, HEADER_SIZE } from '../../pva/constants.js';
import { Framer } from '../../pva/framer.js';
import { emptyHeader, readHeader } from '../../pva/header.js';
import { decodeMessage, encodeMessages } from '../../pva/messages.js';
import { getLogger } from '../../log.js';
import type { PvProvider } from '../ca/circuit.js';
import { PvaServerCircuit } from './circuit.js';

const log = getLogger('server.pva');

export interface PvaServerOptions {
  /** TCP port: EPICS_PVAS_SERVER_PORT, else EPICS_PVA_SERVER_PORT, else 5075 (0: any free port). */
  port?: number;
  /** UDP search port: EPICS_PVAS_BROADCAST_PORT, else EPICS_PVA_BROADCAST_PORT, else 5076 (0: any free port). */
  udpPort?: number;
  /** Address to listen on (default all interfaces). */
  host?: string;
  /** Where beacons go, "host[:port]" (EPICS_PVAS_BEACON_ADDR_LIST, else EPICS_PVA_ADDR_LIST; the port defaults to the broadcast port). */
  beaconAddresses?: string[];
  /** Seconds between beacons (EPICS_PVAS_BEACON_PERIOD, default 15). */
  beaconPeriodS?: number;
}

const env = (k: string): string | undefined => {
  const v = process.env[k]?.trim();
  return v ? v : undefined;
};

export class PvaServer {
  private readonly tcp: net.Server;
  private readonly udp: dgram.Socket;
  private readonly sockets = new Set<net.Socket>();
  private closed = false;
  private beaconTimer: NodeJS.Timeout | undefined;
  private beaconSequence = 0;
  /** The server's GUID, the same in every search answer. */
  readonly guid = new Uint8Array(randomBytes(12));
  port = 0;
  udpPort = 0;

  private constructor(
    private readonly provider: PvProvider,
    private readonly opts: PvaServerOptions,
  ) {
    this.tcp = net.createServer((s) => this.accept(s));
    this.udp = dgram.createSocket({ type: 'udp4', reuseAddr: true });
  }

  static async start(provider: PvProvider, opts: PvaServerOptions = {}): Promise<PvaServer> {
    const s = new PvaServer(provider, opts);
    await s.listen();
    return s;
  }

  private async listen(): Promise<void> {
    const host = this.opts.host ?? '0.0.0.0';
    const port = this.opts.port ?? Number(env('EPICS_PVAS_SERVER_PORT') ?? env('EPICS_PVA_SERVER_PORT') ?? DEFAULT_SERVER_PORT);
    await new Promise<void>((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(port, host, () => {
        this.tcp.off('error', reject);
        resolve();
      });
    });
    this.port = (this.tcp.address() as net.AddressInfo).port;
    const udpPort =
      this.opts.udpPort ?? Number(env('EPICS_PVAS_BROADCAST_PORT') ?? env('EPICS_PVA_BROADCAST_PORT') ?? DEFAULT_BROADCAST_PORT);
    this.udp.on('message', (msg, rinfo) => this.onSearch(msg, rinfo));
    this.udp.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      this.udp.once('error', reject);
      this.udp.bind(udpPort, host, () => {
        this.udp.off('error', reject);
        resolve();
      });
    });
    this.udpPort = this.udp.address().port;
    this.startBeacons(udpPort || DEFAULT_BROADCAST_PORT);
  }

  /** A beacon at once, then every beacon period, to each beacon address. */
  private startBeacons(broadcastPort: number): void {
    const list =
      this.opts.beaconAddresses ?? (env('EPICS_PVAS_BEACON_ADDR_LIST') ?? env('EPICS_PVA_ADDR_LIST') ?? '').split(/\s+/).filter(Boolean);
    const targets = list.map((a) => {
      const [host, port] = a.split(':');
      return { host: host!, port: port ? Number(port) : broadcastPort };
    });
    if (!targets.length) return;
    const period = this.opts.beaconPeriodS ?? Number(env('EPICS_PVAS_BEACON_PERIOD') ?? 15);
    const send = () => {
      if (this.closed) return;
      const b = encodeMessages([
        {
          type: 'Beacon',
          guid: this.guid,
          flags: 0,
          sequenceId: this.beaconSequence++ & 0xff,
          changeCount: 0,
          address: new Uint8Array(16),
          port: this.port,
          protocol: 'tcp',
          serverStatus: null,
        },
      ]);
      for (const t of targets) this.udp.send(b, t.port, t.host);
      this.beaconTimer = setTimeout(send, period * 1000);
      this.beaconTimer.unref();
    };
    send();
  }

  private accept(s: net.Socket): void {
    if (this.closed) return void s.destroy();
    this.sockets.add(s);
    s.setNoDelay(true);
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const b = circuit.take();
      if (b && !s.destroyed) s.write(b);
    };
    const circuit = new PvaServerCircuit(
      this.provider,
      {
        wantFlush: () => {
          if (scheduled) return;
          scheduled = true;
          setImmediate(flush);
        },
      },
      s.remoteAddress ?? '',
      { port: this.port, guid: this.guid },
    );
    const refuse = (reason: string): void => {
      if (s.destroyed) return;
      log.warn({ client: `${s.remoteAddress}:${s.remotePort}`, reason }, 'malformed PV Access message: connection closed');
      s.destroy();
    };
    const framer = new Framer((h, p) => {
      if (!circuit.receive(h, p)) refuse(`command ${h.command} could not be decoded`);
    }, refuse);
    s.on('data', (d) => framer.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      this.sockets.delete(s);
      circuit.close();
    });
  }

  /** A search datagram: one answer naming this server's TCP port for the names it has. */
  private onSearch(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const bytes = new Uint8Array(msg.buffer, msg.byteOffset, msg.length);
    const h = emptyHeader();
    for (let pos = 0; pos + HEADER_SIZE <= bytes.length; pos += HEADER_SIZE + h.payloadSize) {
      if (!readHeader(bytes, pos, h) || pos + HEADER_SIZE + h.payloadSize > bytes.length) return;
      const m = decodeMessage(h, bytes.subarray(pos + HEADER_SIZE, pos + HEADER_SIZE + h.payloadSize));
      if (m.type !== 'SearchRequest') continue;
      const ids = m.channels.filter((c) => this.provider.find(c.name)).map((c) => c.id);
      if (!ids.length) continue;
      const to = m.responseAddress.slice(12).some((b) => b !== 0) ? m.responseAddress.slice(12).join('.') : rinfo.address;
      const reply = encodeMessages([
        {
          type: 'SearchResponse',
          guid: this.guid,
          sequenceId: m.sequenceId,
          address: new Uint8Array(16),
          port: this.port,
          protocol: 'tcp',
          found: true,
          ids,
        },
      ]);
      this.udp.send(reply, m.responsePort || rinfo.port, to);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.beaconTimer);
    for (const s of this.sockets) s.destroy();
    this.udp.close();
    await new Promise((r) => this.tcp.close(r));
  }
}
