// The Channel Access server's I/O: a TCP listener whose circuits run CaServerCircuit, a UDP
// socket on the same port answering searches for the names the provider has (NOT_FOUND only where
// a search asks for a reply), and beacons to the beacon addresses at the EPICS schedule.
import dgram from 'node:dgram';
import net from 'node:net';
import { DEFAULT_REPEATER_PORT, DEFAULT_SERVER_PORT, DO_REPLY, CA_MINOR_PROTOCOL_REVISION } from '../../ca/constants.js';
import { Framer } from '../../ca/framer.js';
import { decodeRequest, encodeMessage } from '../../ca/messages.js';
import { getLogger } from '../../log.js';
import { ByteWriter } from '../../wire/byte-writer.js';

const log = getLogger('server.ca');
import { CaServerCircuit, type PvProvider } from './circuit.js';

export interface CaServerOptions {
  /** TCP and UDP port: EPICS_CAS_SERVER_PORT, else EPICS_CA_SERVER_PORT, else 5064 (0: any free TCP port). */
  port?: number;
  /** Address to listen on (default all interfaces). */
  host?: string;
  /** Where beacons go (EPICS_CAS_BEACON_ADDR_LIST, else EPICS_CA_ADDR_LIST); port EPICS_CA_REPEATER_PORT. */
  beaconAddresses?: string[];
  /** The longest time between beacons, s (EPICS_CAS_BEACON_PERIOD, default 15). */
  beaconPeriodS?: number;
  /** Bytes of a circuit's unsent output above which its updates wait (default 4 MB). */
  maxQueuedBytes?: number;
  /** Largest DBR payload served, bytes (EPICS_CA_MAX_ARRAY_BYTES, default 16384). */
  maxArrayBytes?: number;
}

const env = (k: string): string | undefined => {
  const v = process.env[k]?.trim();
  return v ? v : undefined;
};

export class CaServer {
  private readonly tcp: net.Server;
  private readonly udp: dgram.Socket;
  private readonly sockets = new Set<net.Socket>();
  private beaconTimer: NodeJS.Timeout | undefined;
  private beaconId = 0;
  private readonly maxArrayBytes: number;
  private closed = false;
  port = 0;

  private constructor(
    private readonly provider: PvProvider,
    private readonly opts: CaServerOptions,
  ) {
    this.tcp = net.createServer((s) => this.accept(s));
    this.udp = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    this.maxArrayBytes = opts.maxArrayBytes ?? Number(env('EPICS_CA_MAX_ARRAY_BYTES') ?? 16384);
  }

  /** Listen on TCP and UDP and start the beacons. */
  static async start(provider: PvProvider, opts: CaServerOptions = {}): Promise<CaServer> {
    const s = new CaServer(provider, opts);
    await s.listen();
    return s;
  }

  private async listen(): Promise<void> {
    const host = this.opts.host ?? '0.0.0.0';
    const wanted = this.opts.port ?? Number(env('EPICS_CAS_SERVER_PORT') ?? env('EPICS_CA_SERVER_PORT') ?? DEFAULT_SERVER_PORT);
    await new Promise<void>((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(wanted, host, () => {
        this.tcp.off('error', reject);
        resolve();
      });
    });
    this.port = (this.tcp.address() as net.AddressInfo).port;
    this.udp.on('message', (msg, rinfo) => this.onSearch(msg, rinfo));
    this.udp.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      this.udp.once('error', reject);
      this.udp.bind(this.port, host, () => {
        this.udp.off('error', reject);
        resolve();
      });
    });
    this.startBeacons();
  }

  private accept(s: net.Socket): void {
    if (this.closed) return void s.destroy();
    this.sockets.add(s);
    s.setNoDelay(true);
    const limit = this.opts.maxQueuedBytes ?? 4 * 1024 * 1024;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const b = circuit.take();
      if (!b || s.destroyed) return;
      s.write(b);
      if (s.writableLength > limit) circuit.setBlocked(true);
    };
    const circuit = new CaServerCircuit(
      this.provider,
      {
        wantFlush: () => {
          if (scheduled) return;
          scheduled = true;
          setImmediate(flush);
        },
      },
      s.remoteAddress ?? '',
      { port: this.port, maxArrayBytes: this.maxArrayBytes },
    );
    s.on('drain', () => circuit.setBlocked(false));
    const refuse = (reason: string): void => {
      if (s.destroyed) return;
      log.warn({ client: `${s.remoteAddress}:${s.remotePort}`, reason }, 'malformed CA message: circuit closed');
      s.destroy();
    };
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type === 'Invalid') return refuse(m.reason);
        circuit.receive(m);
      },
      refuse,
      // A request carries at most an array of EPICS_CA_MAX_ARRAY_BYTES (a write) and its DBR header.
      this.maxArrayBytes + 512,
    );
    s.on('data', (d) => framer.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      this.sockets.delete(s);
      circuit.close();
    });
  }

  /** A search datagram: a reply naming this server's port for each name it has. */
  private onSearch(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const w = new ByteWriter();
    let answered = false;
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type !== 'SearchRequest') return;
        if (this.provider.find(m.name)) {
          if (!answered) encodeMessage(w, { type: 'VersionResponse', version: CA_MINOR_PROTOCOL_REVISION, priority: 0, sequence: 0 });
          answered = true;
          encodeMessage(w, {
            type: 'SearchResponse',
            port: this.port,
            address: 0xffffffff,
            cid: m.cid,
            version: CA_MINOR_PROTOCOL_REVISION,
          });
        } else if (m.reply === DO_REPLY) {
          encodeMessage(w, { type: 'NotFoundResponse', cid: m.cid, version: CA_MINOR_PROTOCOL_REVISION });
        }
      },
      () => {},
    );
    framer.push(msg);
    if (w.length) this.udp.send(w.take(), rinfo.port, rinfo.address);
  }

  /** Beacons at 0.02 s doubling up to the beacon period, as RSRV sends them after it starts. */
  private startBeacons(): void {
    const list =
      this.opts.beaconAddresses ?? (env('EPICS_CAS_BEACON_ADDR_LIST') ?? env('EPICS_CA_ADDR_LIST') ?? '').split(/\s+/).filter(Boolean);
    const period = this.opts.beaconPeriodS ?? Number(env('EPICS_CAS_BEACON_PERIOD') ?? 15);
    const repeater = Number(env('EPICS_CA_REPEATER_PORT') ?? DEFAULT_REPEATER_PORT);
    const targets = list.map((a) => {
      const [host, port] = a.split(':');
      return { host: host!, port: port ? Number(port) : repeater };
    });
    let delay = 0.02;
    const send = () => {
      if (this.closed) return;
      const w = new ByteWriter();
      encodeMessage(w, { type: 'Beacon', version: CA_MINOR_PROTOCOL_REVISION, port: this.port, beaconId: this.beaconId++, address: 0 });
      const b = w.take();
      for (const t of targets) this.udp.send(b, t.port, t.host);
      delay = Math.min(delay * 2, period);
      this.beaconTimer = setTimeout(send, delay * 1000);
      this.beaconTimer.unref();
    };
    if (targets.length) send();
  }

  /** Stop: circuits closed (clients see the disconnect), sockets released. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.beaconTimer);
    for (const s of this.sockets) s.destroy();
    this.udp.close();
    await new Promise((r) => this.tcp.close(r));
  }
}
