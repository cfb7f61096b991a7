// What a Context's channel manager does whatever its protocol: the channel cache with its
// references, the holders (monitors) closed with it, searching again for a channel that lost its
// server (or forgetting one nobody holds), and closing all of that.
import type { NameServerStats } from '../transport/name-servers.js';
import type { DestinationStats } from '../transport/search-scheduler.js';
import type { CloseReason } from '../transport/stream.js';
import type { TlsError } from './errors.js';

/** A manager's diagnostics (Context.stats()). */
export interface ManagerStats {
  circuits: number;
  channels: number;
  /** Names still searching. */
  searching: number;
  /** Search datagrams sent (each to every destination). */
  datagramsSent: number;
  /** Per search destination: sends the system took and refused (empty before the first search). */
  searchDestinations: DestinationStats[];
  /**
   * Per name server (EPICS_CA_NAME_SERVERS, EPICS_PVA_NAME_SERVERS), in the configured order:
   * `server` ("host:port"), `connected`, `searchesSent` (CA: SEARCH requests, one per name; PV
   * Access: SEARCH messages) and `answers` (positive search replies received from it).
   */
  nameServers: NameServerStats[];
}

/** Something that holds channels until it is closed (a monitor); closed with the manager. */
export interface Closable {
  close(): void;
}

/** What tells the searcher that a server (re)appeared: its beacons. */
export interface BeaconListener extends Closable {
  /** Beacons of `server` ("host:port" of its TCP address) reach this client. */
  heard(server: string): boolean;
}

/** What the cache needs of its name resolver. */
export interface ChannelSearcher<Ch> {
  add(t: Ch, delayMs?: number): void;
  remove(t: Ch): void;
  close(): void;
  readonly searching: number;
  readonly datagramsSent: number;
  destinationStats(): DestinationStats[];
}

/** What the cache needs of a channel. */
export interface CachedChannel {
  readonly name: string;
  /** Searched again after losing a server whose beacons do not reach this client. */
  searchLost?: boolean;
  readonly state: string;
  readonly held: boolean;
  /** Drop a reference; true when nobody holds it and it is not connected. */
  release(): boolean;
  /** Its connection closed; `broken` (a protocol error or a failed connect) pauses the next search. */
  circuitLost(broken: boolean, protocolError?: string, tlsFailure?: TlsError): void;
  discard(): void;
  close(): void;
}

export abstract class ChannelCache<Ch extends CachedChannel, S extends ChannelSearcher<Ch>> {
  protected udp: S | undefined;
  /** What tells the searcher that a server (re)appeared; made with it, closed with it. */
  protected beacons: BeaconListener | undefined;
  protected readonly channels = new Map<string, Ch>();
  private readonly holders = new Set<Closable>();
  protected isClosed = false;

  get closed(): boolean {
    return this.isClosed;
  }

  /** The name resolver, made on first use. */
  protected abstract searcher(): S;

  /** Drop a reference; a channel nobody holds stops searching (connected ones stay cached). */
  release(ch: Ch): void {
    if (this.isClosed) return;
    if (ch.release()) this.forget(ch);
  }

  private forget(ch: Ch): void {
    this.udp?.remove(ch);
    if (this.channels.get(ch.name) === ch) this.channels.delete(ch.name);
    ch.discard();
  }

  /** Close `h` with the manager (unless it is removed first). */
  hold(h: Closable): void {
    this.holders.add(h);
  }

  unhold(h: Closable): void {
    this.holders.delete(h);
  }

  /** The channel's owner: search again for a channel that lost its server, or forget it if nobody holds it. */
  research(ch: Ch, delayMs: number): void {
    if (this.isClosed || ch.state === 'closed') return;
    if (!ch.held) return this.forget(ch);
    this.searcher().add(ch, delayMs);
  }

  /**
   * The connection to `server` closed for `reason`: `close` fails what it carried (with the reason
   * the protocol layer takes) and returns its channels, each of which then searches again; sooner
   * when no beacon of that server reaches this client (nothing will say it is back).
   */
  protected connectionLost(
    server: string,
    reason: CloseReason,
    detail: string,
    close: (r: { kind: 'protocol' | 'disconnected'; message: string }) => readonly unknown[],
    tlsFailure?: TlsError,
  ): void {
    const chans = close(
      reason === 'protocol' ? { kind: 'protocol', message: detail } : { kind: 'disconnected', message: `${reason}: ${detail}` },
    );
    const broken = reason === 'protocol' || reason === 'connect-failed' || reason === 'tls';
    const protocolError = reason === 'protocol' ? detail : undefined;
    const unheard = !this.beacons?.heard(server);
    for (const ch of chans as Ch[]) {
      ch.searchLost = unheard;
      ch.circuitLost(broken, protocolError, tlsFailure);
    }
  }

  /** The start of close(): every holder, the name resolver and every channel. */
  protected closeChannels(): void {
    this.isClosed = true;
    for (const h of [...this.holders]) h.close();
    this.holders.clear();
    this.beacons?.close();
    this.beacons = undefined;
    this.udp?.close();
    this.udp = undefined;
    for (const ch of this.channels.values()) ch.close();
    this.channels.clear();
  }

  /** Diagnostics: connections (`circuits`, the protocol's count), channels, the name resolver's and the name servers'. */
  protected statsWith(circuits: number, nameServers: NameServerStats[]): ManagerStats {
    const u = this.udp;
    return {
      circuits,
      channels: this.channels.size,
      searching: u?.searching ?? 0,
      datagramsSent: u?.datagramsSent ?? 0,
      searchDestinations: u?.destinationStats() ?? [],
      nameServers,
    };
  }
}
