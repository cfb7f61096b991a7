// The PV Access server's I/O: a TCP listener whose connections run PvaServerCircuit, with a TLS
// one beside it when the server has a keychain (Secure PV Access), and a UDP socket on the
// broadcast port answering searches for the names the provider has.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { networkInterfaces } from 'node:os';
import tls from 'node:tls';
import { KeychainError, readKeychain } from '../../transport/keychain.js';
import { DEFAULT_BROADCAST_PORT, DEFAULT_SERVER_PORT, HEADER_SIZE } from '../../pva/constants.js';
import { Framer } from '../../pva/framer.js';
import { emptyHeader, readHeader } from '../../pva/header.js';
import { decodeMessage, encodeMessages } from '../../pva/messages.js';
import { addressBytes, addressOf, ipv4Mapped } from '../../pva/messages-session.js';
import { multicastInterface, parsePvaAddressList, type PvaAddress } from '../../transport/addresses.js';
import { forwardedForm, LOCAL_MCAST_GROUP } from '../../pva/forward.js';
import { joinLocalGroup } from '../../transport/pva/beacons.js';
import { getLogger } from '../../log.js';
import type { PvaProvider } from './circuit.js';
import { addressList, batchedWrites, beaconList, bindUdp, env, listenTcp, SocketServer, targetsOf } from '../net.js';
import { PvaServerCircuit } from './circuit.js';

const log = getLogger('server.pva');

export interface PvaServerOptions {
  /** TCP port: EPICS_PVAS_SERVER_PORT, else EPICS_PVA_SERVER_PORT, else 5075 (0: any free port). */
  port?: number;
  /** UDP search port: EPICS_PVAS_BROADCAST_PORT, else EPICS_PVA_BROADCAST_PORT, else 5076 (0: any free port). */
  udpPort?: number;
  /** Address to listen on (EPICS_PVAS_INTF_ADDR_LIST's first, else all interfaces). */
  host?: string;
  /**
   * Where beacons go, "host[:port]" (default EPICS_PVAS_BEACON_ADDR_LIST, else EPICS_PVA_ADDR_LIST,
   * and the broadcast addresses of the interfaces served unless EPICS_PVAS_AUTO_BEACON_ADDR_LIST,
   * else EPICS_PVA_AUTO_ADDR_LIST, is NO; the port defaults to the broadcast port).
   */
  beaconAddresses?: string[];
  /** Seconds between beacons (EPICS_PVAS_BEACON_PERIOD, default 15). */
  beaconPeriodS?: number;
  /** Bytes of a connection's unsent output above which its monitors' updates wait (default 4 MB). */
  maxQueuedBytes?: number;
  /**
   * Secure PV Access: the server's keychain (default EPICS_PVAS_TLS_KEYCHAIN, "path" or core-pva's
   * "path;password", the password else in EPICS_PVAS_TLS_KEYCHAIN_PWD_FILE), on its own TCP port
   * (EPICS_PVAS_TLS_PORT, default 5076). false: none.
   */
  tls?: PvaServerTls | false;
}

export interface PvaServerTls {
  /** A PKCS#12 file holding the server's key and certificate, and the authorities client certificates are checked against. */
  keychain: string;
  password?: string;
  /** Client certificates: asked for and checked when given (optional, the default), required, or not asked for (EPICS_PVAS_TLS_OPTIONS client_cert=...). */
  clientCert?: 'optional' | 'require' | 'none';
  port?: number;
}

/** The TLS settings of the environment, as pvxs and core-pva read them; undefined: none. */
function tlsFromEnv(): PvaServerTls | undefined {
  const setting = env('EPICS_PVAS_TLS_KEYCHAIN');
  if (!setting) return undefined;
  const sep = setting.indexOf(';');
  const pwdFile = env('EPICS_PVAS_TLS_KEYCHAIN_PWD_FILE');
  let password = sep > 0 ? setting.slice(sep + 1) : '';
  if (sep < 0 && pwdFile)
    try {
      password = readFileSync(pwdFile, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new KeychainError(`server keychain password file ${pwdFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  const cert = /client_cert=(\w+)/.exec(env('EPICS_PVAS_TLS_OPTIONS') ?? '')?.[1];
  return {
    keychain: sep > 0 ? setting.slice(0, sep) : setting,
    password,
    clientCert: cert === 'require' ? 'require' : cert === 'none' ? 'none' : 'optional',
  };
}

/** The TLS server options of a keychain: its key and certificate, its other certificates the authorities of clients. */
function tlsOptions(t: PvaServerTls): tls.TlsOptions {
  let k: ReturnType<typeof readKeychain>;
  try {
    k = readKeychain(readFileSync(t.keychain), t.password ?? '');
  } catch (err) {
    const why = err instanceof KeychainError ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
    throw new KeychainError(`server keychain ${t.keychain}: ${why}`);
  }
  if (!k.key || !k.cert) throw new KeychainError(`server keychain ${t.keychain}: holds no key and certificate of its own`);
  const ask = (t.clientCert ?? 'optional') !== 'none';
  return {
    key: k.key.export({ format: 'pem', type: 'pkcs8' }),
    cert: k.cert.toString(),
    ca: k.trusted.map((c) => c.toString()),
    minVersion: 'TLSv1.2',
    requestCert: ask,
    rejectUnauthorized: t.clientCert === 'require',
  };
}

export class PvaServer extends SocketServer {
  private beaconSequence = 0;
  private host = '0.0.0.0';
  /** The server's GUID, the same in every search answer. */
  readonly guid = new Uint8Array(randomBytes(12));
  port = 0;
  udpPort = 0;
  /** The address search replies give, IPv4-mapped (::ffff:0.0.0.0 for every interface: the reply's source). */
  private address = ipv4Mapped('0.0.0.0');
  /** The TLS port; undefined without TLS. */
  tlsPort: number | undefined;
  private local: dgram.Socket | undefined;

  private constructor(
    private readonly provider: PvaProvider,
    private readonly opts: PvaServerOptions,
  ) {
    super('PV Access', log);
  }

  static async start(provider: PvaProvider, opts: PvaServerOptions = {}): Promise<PvaServer> {
    const s = new PvaServer(provider, opts);
    await s.open(() => s.listen());
    return s;
  }

  private async listen(): Promise<void> {
    // EPICS_PVAS_INTF_ADDR_LIST as pvxs reads it: addresses to serve on ("0.0.0.0", "[::]", one
    // interface's), IPv4 and IPv6 apart, and multicast groups to hear searches on.
    const list = this.opts.host !== undefined ? [this.opts.host] : addressList('EPICS_PVAS_INTF_ADDR_LIST');
    const entries = parsePvaAddressList(list, 0, 'EPICS_PVAS_INTF_ADDR_LIST');
    const served = entries.filter((a) => !a.multicast);
    if (!served.length) served.push({ family: 4, host: '0.0.0.0', port: 0, multicast: false });
    const host = (this.host = served.find((a) => a.family === 4)?.host ?? '0.0.0.0');
    this.address = ipv4Mapped(host);
    let port = this.opts.port ?? Number(env('EPICS_PVAS_SERVER_PORT') ?? env('EPICS_PVA_SERVER_PORT') ?? DEFAULT_SERVER_PORT);
    let udpPort =
      this.opts.udpPort ?? Number(env('EPICS_PVAS_BROADCAST_PORT') ?? env('EPICS_PVA_BROADCAST_PORT') ?? DEFAULT_BROADCAST_PORT);
    const broadcastPort = udpPort || DEFAULT_BROADCAST_PORT;
    let first = true;
    for (const a of served) {
      // The first IPv4 address on the base's sockets, the others on sockets of their own (IPv6 ones IPv6 only, as pvxs's).
      const primary = first && a.family === 4;
      const tcp = primary ? this.tcp : this.moreListener();
      port = this.port = await listenTcp(tcp, port, a.host, a.family === 6);
      const udp = primary
        ? this.udp
        : this.moreSocket({ type: a.family === 6 ? 'udp6' : 'udp4', reuseAddr: true, ipv6Only: a.family === 6 });
      const address = a.family === 4 ? ipv4Mapped(a.host) : addressBytes(a.host);
      // Bound to a loopback address, the socket hears unicast searches only, which the host's other
      // PVA processes sharing the port may be waiting for: each goes to the local group and is
      // answered from there (pvxs's local forwarding), as are those another process received.
      const loopback = a.host.startsWith('127.');
      udp.on('message', (msg, rinfo) => {
        if (!(loopback && this.forward(msg, a.host, rinfo.address))) this.onSearch(msg, rinfo, udp, address);
      });
      udpPort = await bindUdp(udp, udpPort, a.host);
      if (primary) this.udpPort = udpPort;
      first = false;
    }
    if (!this.udpPort) this.udpPort = udpPort;
    for (const g of entries.filter((a) => a.multicast)) this.joinGroup(g);
    const t = this.opts.tls === false ? undefined : (this.opts.tls ?? tlsFromEnv());
    if (t) {
      const secure = this.moreListener(tls.createServer(tlsOptions(t), (c) => this.connection(c)));
      // A handshake that fails (a client that does not trust this server) is that client's.
      secure.on('tlsClientError', (err) => log.debug({ err: err.message }, 'TLS handshake failed'));
      const tlsPort = t.port ?? Number(env('EPICS_PVAS_TLS_PORT') ?? DEFAULT_TLS_PORT);
      this.tlsPort = await listenTcp(secure, tlsPort, host);
    }
    await this.joinLocalGroup(this.udpPort);
    this.startBeacons(broadcastPort);
  }

  /** Hear searches sent to a multicast group, on the served socket of its family (on its interface, else the route's). */
  private joinGroup(g: PvaAddress): void {
    const udp = [this.udp, ...this.moreUdp].find((u) => {
      try {
        return u.address().family === (g.family === 6 ? 'IPv6' : 'IPv4');
      } catch {
        return false; // not bound
      }
    });
    const iface = g.iface === undefined ? undefined : multicastInterface(g.family, g.iface, networkInterfaces());
    try {
      if (!udp) throw new Error(`no IPv${g.family} address is served`);
      udp.addMembership(g.host, iface);
    } catch (err) {
      log.warn({ group: g.host, err: (err as Error).message }, 'cannot join a multicast group of EPICS_PVAS_INTF_ADDR_LIST');
    }
  }

  /** Hear the local group 224.0.0.128 on loopback; without it (no multicast there) unicast searches are answered where they arrive. */
  private async joinLocalGroup(port: number): Promise<void> {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    s.on('error', () => {});
    s.on('message', (msg, rinfo) => this.onSearch(msg, rinfo));
    try {
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.bind(port, LOCAL_MCAST_GROUP, () => resolve());
      });
      joinLocalGroup(s);
      this.local = s;
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'cannot join the local PVA multicast group');
      s.close();
    }
  }

  /** Pass a unicast datagram on to the local group (true), or not (false: answer it here). */
  private forward(msg: Buffer, dest: string, from: string): boolean {
    const out = this.local && forwardedForm(msg, dest, from);
    if (!out) return false;
    this.local!.send(out, this.udpPort, LOCAL_MCAST_GROUP);
    return true;
  }

  override async close(): Promise<void> {
    this.local?.close();
    this.local = undefined;
    await super.close();
  }

  protected serve(s: net.Socket, refuse: (reason: string) => void): () => void {
    const circuit: PvaServerCircuit = new PvaServerCircuit(
      this.provider,
      {
        wantFlush: batchedWrites(s, () => circuit.take(), {
          limit: this.opts.maxQueuedBytes ?? 4 * 1024 * 1024,
          set: (on) => circuit.setBlocked(on),
        }),
      },
      s.remoteAddress ?? '',
      {
        port: this.port,
        guid: this.guid,
        address: this.address,
        ...(this.tlsPort !== undefined ? { tlsPort: this.tlsPort } : {}),
        ...(s instanceof tls.TLSSocket ? { tls: { certName: s.authorized ? certName(s) : undefined } } : {}),
      },
    );
    const framer = new Framer((h, p) => {
      if (!circuit.receive(h, p)) refuse(`command ${h.command} could not be decoded`);
    }, refuse);
    s.on('data', (d) => framer.push(d));
    return () => circuit.close();
  }

  /** A beacon at once, then every beacon period, to each beacon address. */
  private startBeacons(broadcastPort: number): void {
    const list = beaconList(
      this.opts.beaconAddresses,
      [this.host],
      ['EPICS_PVAS_BEACON_ADDR_LIST', 'EPICS_PVA_ADDR_LIST'],
      ['EPICS_PVAS_AUTO_BEACON_ADDR_LIST', 'EPICS_PVA_AUTO_ADDR_LIST'],
    );
    const targets = targetsOf(list, broadcastPort);
    if (!targets.length) return;
    const period = this.opts.beaconPeriodS ?? Number(env('EPICS_PVAS_BEACON_PERIOD') ?? 15);
    this.beacons(
      () => {
        const b = encodeMessages([
          {
            type: 'Beacon',
            guid: this.guid,
            flags: 0,
            sequenceId: this.beaconSequence++ & 0xff,
            changeCount: 0,
            address: this.address,
            port: this.port,
            protocol: 'tcp',
            serverStatus: null,
          },
        ]);
        for (const t of targets) this.udp.send(b, t.port, t.host);
      },
      () => period,
    );
  }

  /** A search datagram: one answer naming this server's TCP port for the names it has, from the socket it came to. */
  private onSearch(msg: Buffer, rinfo: dgram.RemoteInfo, udp = this.udp, address = this.address): void {
    const bytes = new Uint8Array(msg.buffer, msg.byteOffset, msg.length);
    const h = emptyHeader();
    for (let pos = 0; pos + HEADER_SIZE <= bytes.length; pos += HEADER_SIZE + h.payloadSize) {
      if (!readHeader(bytes, pos, h) || pos + HEADER_SIZE + h.payloadSize > bytes.length) return;
      const m = decodeMessage(h, bytes.subarray(pos + HEADER_SIZE, pos + HEADER_SIZE + h.payloadSize));
      if (m.type !== 'SearchRequest') continue;
      const ids = m.channels.filter((c) => this.provider.findPva(c.name)).map((c) => c.id);
      if (!ids.length) continue;
      const to = addressOf(m.responseAddress) ?? rinfo.address;
      // A client that offers TLS is sent to the TLS port, as pvxs does.
      const secure = this.tlsPort !== undefined && m.protocols.includes('tls');
      const reply = encodeMessages([
        {
          type: 'SearchResponse',
          guid: this.guid,
          sequenceId: m.sequenceId,
          address,
          port: secure ? this.tlsPort! : this.port,
          protocol: secure ? 'tls' : 'tcp',
          found: true,
          ids,
        },
      ]);
      udp.send(reply, m.responsePort || rinfo.port, to);
    }
  }
}

/** The TLS default port of pvxs and core-pva (TCP, the number of the UDP search port). */
const DEFAULT_TLS_PORT = 5076;

/** The common name of a TLS connection's client certificate. */
function certName(s: tls.TLSSocket): string | undefined {
  const cn = s.getPeerCertificate()?.subject?.CN;
  return Array.isArray(cn) ? cn[0] : cn;
}
