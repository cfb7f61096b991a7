// Hearing that a PV Access server has (re)appeared (a new GUID or change count in its beacon), so
// that names not yet found are searched for again at once instead of after their backoff.
import dgram from 'node:dgram';
import { Cmd, HEADER_SIZE } from '../../pva/constants.js';
import { emptyHeader, readHeader } from '../../pva/header.js';
import { decodeMessage } from '../../pva/messages.js';
import { ipv4Of } from '../../pva/messages-session.js';
import { getLogger } from '../../log.js';
import type { SearchDestination } from '../config.js';

const log = getLogger('beacons');

/** Servers not heard from for this long are forgotten. */
const SERVER_MAX_AGE_MS = 3_600_000;

/**
 * PV Access beacons, on the broadcast port of each broadcast destination (127.255.255.255 for a
 * loopback one). Bound to the broadcast address, never to 0.0.0.0, so the socket shares the port
 * with the host's PVA servers and clients and takes none of the unicast searches meant for them.
 */
export class PvaBeacons {
  private readonly socks: dgram.Socket[] = [];
  /** Per server ("host:port"): its GUID and change count as last heard. */
  private readonly servers = new Map<string, { guid: string; changes: number; at: number }>();
  private readonly header = emptyHeader();

  constructor(destinations: readonly SearchDestination[], port: number, private readonly onAnomaly: (server: string) => void) {
    const hosts = new Set<string>();
    for (const d of destinations) {
      if (d.broadcast) hosts.add(d.host);
      else if (d.host.startsWith('127.')) hosts.add('127.255.255.255');
    }
    for (const host of hosts) {
      const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
      s.on('error', (err) => log.debug({ host, port, err: err.message }, 'cannot hear PVA beacons there'));
      s.on('message', (msg, from) => this.onMessage(msg, from.address));
      s.bind(port, host, () => s.unref());
      this.socks.push(s);
    }
  }

  private onMessage(msg: Buffer, from: string): void {
    const h = this.header;
    if (msg.length < HEADER_SIZE || !readHeader(msg, 0, h) || h.command !== Cmd.BEACON) return;
    const m = decodeMessage(h, msg.subarray(HEADER_SIZE, HEADER_SIZE + h.payloadSize));
    if (m.type !== 'Beacon') return;
    const ip = ipv4Of(m.address);
    const server = `${!ip || ip === '0.0.0.0' ? from : ip}:${m.port}`;
    const guid = Buffer.from(m.guid).toString('hex');
    const now = Date.now();
    const last = this.servers.get(server);
    this.servers.set(server, { guid, changes: m.changeCount, at: now });
    if (!last || last.guid !== guid || last.changes !== m.changeCount) this.onAnomaly(server);
    if (this.servers.size > 64) for (const [k, s] of this.servers) if (now - s.at > SERVER_MAX_AGE_MS) this.servers.delete(k);
  }

  close(): void {
    for (const s of this.socks.splice(0)) {
      try {
        s.close();
      } catch {
        // already closed
      }
    }
  }
}
