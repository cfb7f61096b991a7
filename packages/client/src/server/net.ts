// What both protocols' servers do with sockets: the environment's settings, a TCP listener and a
// UDP socket (a bind error is the start's error), the connections (a malformed message closes one,
// with one warning), beacons, and a connection's writes batched per turn with a bound on what
// waits unsent.
import dgram from 'node:dgram';
import net from 'node:net';
import os from 'node:os';
import type { Logger } from '../log.js';
import { isMulticast } from '../transport/addresses.js';
import { broadcastAddresses, type Ifaces } from '../transport/config.js';

export const env = (k: string): string | undefined => {
  const v = process.env[k]?.trim();
  return v ? v : undefined;
};

/** The address list in the first of these variables that is set ("a b:port ..."), or none. */
export function addressList(...keys: string[]): string[] {
  for (const k of keys) {
    const v = env(k);
    if (v) return v.split(/\s+/);
  }
  return [];
}

/**
 * Where a server's beacons go, as RSRV and pvxs choose: `given` (the app's) alone, else the
 * `listKeys` variable's list and, unless the `autoKeys` variable says NO, the broadcast
 * addresses of the interfaces the server is on (`hosts`: 0.0.0.0 every one; loopback none).
 */
export function beaconList(given: string[] | undefined, hosts: readonly string[], listKeys: string[], autoKeys: string[]): string[] {
  if (given) return given;
  const list = addressList(...listKeys);
  const auto = autoKeys.map(env).find((v) => v !== undefined) ?? 'YES';
  if (auto.toUpperCase() === 'NO') return list;
  const mine: Ifaces = {};
  for (const [name, addrs] of Object.entries(os.networkInterfaces() as Ifaces))
    mine[name] = addrs?.filter((a) => hosts.includes('0.0.0.0') || hosts.includes(a.address));
  return [...list, ...broadcastAddresses(mine)];
}

/**
 * EPICS_CAS_INTF_ADDR_LIST as RSRV reads it: the IPv4 addresses to serve on (ports are ignored;
 * none: every interface) and the multicast groups to join. A bad entry is warned about and
 * skipped; 0.0.0.0 beside other addresses is an error, as it is to RSRV.
 */
export function interfaceList(list: readonly string[], log?: Logger): { hosts: string[]; groups: string[] } {
  const hosts: string[] = [];
  const groups: string[] = [];
  for (const entry of list) {
    const host = entry.split(':')[0]!;
    if (!net.isIPv4(host)) {
      log?.warn({ entry }, 'not an IPv4 address in EPICS_CAS_INTF_ADDR_LIST: skipped');
      continue;
    }
    const into = isMulticast(host) ? groups : hosts;
    if (!into.includes(host)) into.push(host);
  }
  if (hosts.includes('0.0.0.0') && hosts.length > 1)
    throw new Error(`EPICS_CAS_INTF_ADDR_LIST cannot hold 0.0.0.0 and other addresses (${list.join(' ')})`);
  return { hosts: hosts.length ? hosts : ['0.0.0.0'], groups };
}

/**
 * The broadcast address of the interface (loopback included) that `host` is on: the one with that
 * address, else the one whose subnet holds it (127.0.0.2 is lo's, 127.0.0.1/8); undefined if none.
 */
export function broadcastOf(host: string, ifaces: Ifaces): string | undefined {
  const octets = (a: string) => a.split('.').map(Number);
  const ip = octets(host);
  let found: number[] | undefined;
  for (const list of Object.values(ifaces))
    for (const a of list ?? []) {
      if (a.family !== 'IPv4' && a.family !== 4) continue;
      const mask = octets(a.netmask);
      const own = octets(a.address);
      if (a.address === host) found = mask;
      else if (!found && ip.every((b, i) => (b & mask[i]!) === (own[i]! & mask[i]!))) found = mask;
    }
  // (none on a point-to-point link)
  return found && found[3]! < 254 ? ip.map((b, i) => (b | (~found![i]! & 255)) & 255).join('.') : undefined;
}

/** Hear the multicast `group` on `udp`, on the interface of `host` (0.0.0.0: the group's route); a failure is logged. */
export function joinGroup(udp: dgram.Socket, group: string, host: string, log?: Logger): void {
  try {
    udp.addMembership(group, host === '0.0.0.0' ? undefined : host);
  } catch (err) {
    // (EADDRINUSE: joined on that interface already, for another of its addresses)
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE')
      log?.warn({ group, host, err: (err as Error).message }, 'cannot join a multicast group of the interface list');
  }
}

/** Listen on `port` (0: any free one) of `host`; resolves to the port. */
export function listenTcp(server: net.Server, port: number, host: string, ipv6Only = false): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only }, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/**
 * Bind the UDP `port` (0: any free one) for a server on `host`; resolves to the port. A socket
 * bound to one address gets no broadcasts, so beyond loopback the socket takes every interface's,
 * unless `exact` (the caller hears the interface's broadcasts on a socket of their own). An IPv4
 * socket may send to broadcast addresses (beacons).
 */
export function bindUdp(socket: dgram.Socket, port: number, host: string, exact = false): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    // (IPv6 has no broadcast: an IPv6 socket is bound to the address given.)
    socket.bind(port, exact || host.startsWith('127.') || host.includes(':') ? host : '0.0.0.0', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      if (!host.includes(':')) socket.setBroadcast(true);
      resolve(socket.address().port);
    });
  });
}

/** "host[:port]" entries of an address list, the port `defaultPort` where none is given. */
export function targetsOf(list: string[], defaultPort: number): { host: string; port: number }[] {
  return list.map((a) => {
    const [host, port] = a.split(':');
    return { host: host!, port: port ? Number(port) : defaultPort };
  });
}

/**
 * The wantFlush of a connection's circuit: what it has to send goes out once per turn (the
 * updates of one turn in one write). With `blocked`, told when more than `limit` bytes wait unsent
 * (true) and when they have drained (false).
 */
export function batchedWrites(
  s: net.Socket,
  take: () => Uint8Array | Uint8Array[] | undefined,
  blocked?: { limit: number; set: (on: boolean) => void },
): () => void {
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const b = take();
    if (!b || s.destroyed) return;
    if (b instanceof Uint8Array) s.write(b);
    // The usual turn, one chunk: written without the cork, which runs more of the stream's code.
    else if (b.length === 1) s.write(b[0]!);
    else {
      s.cork();
      for (const c of b) s.write(c);
      s.uncork();
    }
    if (blocked && s.writableLength > blocked.limit) blocked.set(true);
  };
  if (blocked) s.on('drain', () => blocked.set(false));
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
}

/** A TCP listener, a UDP socket, the connections and the beacons of one protocol's server. */
export abstract class SocketServer {
  protected readonly tcp = net.createServer((s) => this.connection(s));
  protected readonly udp = dgram.createSocket({ type: 'udp4', reuseAddr: true });
  private readonly sockets = new Set<net.Socket>();
  private beaconTimer: NodeJS.Timeout | undefined;
  protected closed = false;

  constructor(
    /** The protocol, as the warnings name it. */
    private readonly protocol: string,
    private readonly log: Logger,
  ) {}

  /** Serve one connection; `refuse` closes it (a malformed message). Returns what to do when it ends. */
  protected abstract serve(s: net.Socket, refuse: (reason: string) => void): () => void;

  protected connection(s: net.Socket): void {
    if (this.closed) return void s.destroy();
    this.sockets.add(s);
    s.setNoDelay(true);
    s.on('error', () => {});
    const refuse = (reason: string): void => {
      if (s.destroyed) return;
      this.log.warn({ client: `${s.remoteAddress}:${s.remotePort}`, reason }, `malformed ${this.protocol} message: connection closed`);
      s.destroy();
    };
    const end = this.serve(s, refuse);
    s.on('close', () => {
      this.sockets.delete(s);
      end();
    });
  }

  /** Run `listen` (bind the sockets, start the beacons); if it fails, nothing is left open. */
  protected async open(listen: () => Promise<void>): Promise<void> {
    try {
      await listen();
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  /** Send a beacon now with `send`, then again after each of `next()` seconds, until closed. */
  protected beacons(send: () => void, next: () => number): void {
    const tick = (): void => {
      if (this.closed) return;
      send();
      this.beaconTimer = setTimeout(tick, next() * 1000);
      this.beaconTimer.unref();
    };
    tick();
  }

  /** Stop: connections closed (clients see the disconnect), sockets released. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.beaconTimer);
    for (const s of this.sockets) s.destroy();
    for (const u of [this.udp, ...this.moreUdp])
      try {
        u.close();
      } catch {
        // never bound
      }
    await Promise.all([this.tcp, ...this.moreListeners].map((l) => new Promise((r) => l.close(r))));
  }

  /** Listeners beyond `tcp` (more addresses, TLS) and sockets beyond `udp`, closed with them. */
  protected readonly moreListeners: net.Server[] = [];
  protected readonly moreUdp: dgram.Socket[] = [];

  /** One more TCP listener for connections, closed with the server. */
  protected moreListener(server: net.Server = net.createServer((s) => this.connection(s))): net.Server {
    this.moreListeners.push(server);
    return server;
  }

  /** One more UDP socket, closed with the server. */
  protected moreSocket(opts: dgram.SocketOptions = { type: 'udp4', reuseAddr: true }): dgram.Socket {
    const s = dgram.createSocket(opts);
    this.moreUdp.push(s);
    return s;
  }
}
