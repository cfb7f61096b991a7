// The UDP sockets a searcher sends through and reads replies from: lane 0 is the udp4 socket
// (every IPv4 unicast and broadcast destination; CA's only one), then a udp6 socket when some
// destination is IPv6, and one socket per multicast (family, interface, TTL): the outgoing
// interface and TTL are options of a socket and sends are asynchronous, so one socket cannot
// change them between two sends without racing.
import dgram from 'node:dgram';
import os from 'node:os';
import { getLogger } from '../log.js';
import { hostPort, multicastInterface } from './addresses.js';
import type { Ifaces, SearchDestination } from './config.js';

const log = getLogger('search');

/** Receive buffer asked for each search socket: replies to a burst must fit. */
const RECV_BUFFER_BYTES = 1 << 20;

interface Lane {
  readonly family: 4 | 6;
  readonly key: string;
  readonly iface?: string | undefined;
  readonly ttl?: number | undefined;
  sock?: dgram.Socket | undefined;
  /** Bound (true), or failed to bind (the error): either way settled. */
  state?: true | Error;
}

/** The lane key of a destination (udp4 and udp6 shared by every unicast and broadcast one). */
function laneKey(d: SearchDestination): string {
  const family = d.family ?? 4;
  return d.multicast ? `m${family}|${d.iface ?? ''}|${d.ttl ?? ''}` : `udp${family}`;
}

/** "host:port", "[ip6]:port", with ",TTL@iface" of a multicast group (pvxs's form). */
export function destinationName(d: SearchDestination): string {
  let s = hostPort(d.host, d.port);
  if (d.multicast && d.ttl !== undefined) s += `,${d.ttl}`;
  if (d.multicast && d.iface !== undefined) s += `@${d.iface}`;
  return s;
}

export class SearchSockets {
  private readonly lanes: Lane[] = [{ family: 4, key: 'udp4' }];
  /** Per destination (in the order given): its lane. */
  readonly laneOf: readonly number[];
  private opened = false;
  private closed = false;
  /** True once every socket is bound or failed to. */
  ready = false;

  constructor(
    destinations: readonly SearchDestination[],
    private readonly onMessage: (msg: Buffer, from: string) => void,
    /** Every socket is bound (or failed to): called once. */
    private readonly onReady: () => void,
    private readonly ifaces: () => Ifaces = () => os.networkInterfaces() as Ifaces,
  ) {
    this.laneOf = destinations.map((d) => {
      const key = laneKey(d);
      const lane = this.lanes.findIndex((l) => l.key === key);
      if (lane >= 0) return lane;
      this.lanes.push({ family: d.family ?? 4, key, ...(d.multicast && { iface: d.iface, ttl: d.ttl }) });
      return this.lanes.length - 1;
    });
  }

  /** The udp4 socket (every socket made and bound on first use). */
  udp4(): dgram.Socket {
    this.open();
    return this.lanes[0]!.sock!;
  }

  /** The socket of `lane`, or undefined when it could not be bound. */
  socket(lane: number): dgram.Socket | undefined {
    this.open();
    const l = this.lanes[lane]!;
    return l.state instanceof Error ? undefined : l.sock;
  }

  /** Why `lane`'s socket could not be bound (undefined: it is fine). */
  error(lane: number): Error | undefined {
    const st = this.lanes[lane]!.state;
    return st instanceof Error ? st : undefined;
  }

  /** The local port of `lane`'s socket; 0 when not bound. */
  port(lane: number): number {
    const l = this.lanes[lane]!;
    return l.state === true && l.sock ? l.sock.address().port : 0;
  }

  private open(): void {
    if (this.opened || this.closed) return;
    this.opened = true;
    for (const lane of this.lanes) this.openLane(lane);
  }

  private openLane(lane: Lane): void {
    const s = lane.family === 6 ? dgram.createSocket({ type: 'udp6', ipv6Only: true }) : dgram.createSocket({ type: 'udp4' });
    lane.sock = s;
    s.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    s.on('error', (err) => {
      if (lane.state === undefined) {
        // Not bound (no IPv6 on this host, say): its destinations fail, the others go on.
        lane.state = err;
        log.warn({ err: err.message }, `search socket (${lane.key}) cannot be bound: ${err.message}`);
        this.settled();
        return;
      }
      // A send's error goes to its destination's callback; what reaches here is the socket's.
      log.warn({ err: err.message }, 'search socket error');
    });
    s.once('listening', () => {
      lane.state = true;
      // Broadcast destinations are the EPICS default: without this, the system refuses them.
      if (lane.family === 4) s.setBroadcast(true);
      try {
        if (s.getRecvBufferSize() < RECV_BUFFER_BYTES) s.setRecvBufferSize(RECV_BUFFER_BYTES);
      } catch {
        // the system caps it: keep its default
      }
      if (lane.key.startsWith('m')) this.prepareMulticast(lane, s);
      this.settled();
    });
    s.bind(0);
  }

  /** A multicast lane's outgoing interface and TTL, set once: every send of the socket uses them. */
  private prepareMulticast(lane: Lane, s: dgram.Socket): void {
    try {
      if (lane.ttl !== undefined) s.setMulticastTTL(lane.ttl);
      if (lane.iface !== undefined) {
        const itf = multicastInterface(lane.family, lane.iface, this.ifaces());
        if (itf === undefined) log.warn(`multicast searches: no interface "${lane.iface}": the system chooses one`);
        else s.setMulticastInterface(itf);
      }
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        `multicast searches through ${lane.iface ?? 'the default interface'}: ${(err as Error).message}`,
      );
    }
  }

  private settled(): void {
    if (this.ready || this.closed || !this.lanes.every((l) => l.state !== undefined)) return;
    this.ready = true;
    this.onReady();
  }

  close(): void {
    this.closed = true;
    for (const lane of this.lanes) {
      const s = lane.sock;
      lane.sock = undefined;
      try {
        s?.close();
      } catch {
        // already closed
      }
    }
  }
}
