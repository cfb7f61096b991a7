// The PV Access side of a Context: name resolution (UDP searcher and TCP name servers) and one
// connection per server, on the channel cache every protocol shares.
import { getLogger } from '../../log.js';
import type { PvaConfig } from '../../transport/pva/config.js';
import { hostPort } from '../../transport/addresses.js';
import { PvaCircuit } from '../../transport/pva/tcp.js';
import type { CloseReason } from '../../transport/stream.js';
import { beaconBindings, PvaBeacons } from '../../transport/pva/beacons.js';
import { PvaSearcher, type PvaSearchTarget } from '../../transport/pva/udp.js';
import { BadArgumentError, ClosedError } from '../errors.js';
import { ChannelCache, type ManagerStats } from '../channel-cache.js';
import type { NameServers } from '../../transport/name-servers.js';
import { pvaNameServers } from '../../transport/pva/name-servers.js';
import { PvaChannel } from './channel.js';
import { KeychainError } from '../../transport/keychain.js';
import { loadPvaTls, type PvaTls } from '../../transport/pva/tls.js';
import { TlsError, tlsErrorOf } from '../errors.js';

/** One PV Access connection as Context.stats() shows it. */
export interface PvaConnectionStats {
  /** "host:port" of the server. */
  server: string;
  /** Over TLS (Secure PV Access). */
  tls: boolean;
  /** How this client identified itself: "x509" (its certificate), "ca" (user name) or "anonymous"; absent before validation. */
  identity?: string;
  /** With x509: the common name of this client's certificate, the name the server knows it by. */
  as?: string;
  /** Over TLS: the common name of the server's certificate. */
  peer?: string;
}

export interface PvaManagerStats extends ManagerStats {
  connections: PvaConnectionStats[];
}

const log = getLogger('pva.context');

export class PvaManager extends ChannelCache<PvaChannel, PvaSearcher> {
  private readonly circuits = new Map<string, PvaCircuit>();
  /** The name servers (EPICS_PVA_NAME_SERVERS), connected with the first search. */
  private readonly nameServers: NameServers<PvaCircuit>;
  private nextCid = 1;
  /** The TLS settings from the keychain (Secure PV Access), when one is configured. */
  private readonly tls: PvaTls | undefined;

  /** Throws TlsError (ERR_EPICS_TLS_KEYCHAIN) when the configured keychain cannot be read. */
  constructor(readonly config: PvaConfig) {
    super();
    try {
      this.tls = config.tls ? loadPvaTls(config.tls) : undefined;
    } catch (err) {
      if (err instanceof KeychainError) throw new TlsError('ERR_EPICS_TLS_KEYCHAIN', err.message);
      throw err;
    }
    this.nameServers = pvaNameServers(
      config,
      (found, ids, address, port, host, protocol) => this.udp?.found(found, ids, address, port, host, protocol),
      () => this.udp?.searchAgain(),
    );
  }

  /** Take a reference on a name's channel (creating and searching it). */
  acquire(name: string): PvaChannel {
    if (this.isClosed) throw new ClosedError(undefined, name);
    if (typeof name !== 'string' || name.length === 0) throw new BadArgumentError('the PV name is empty');
    let ch = this.channels.get(name);
    if (!ch) {
      if (name.includes('\0')) throw new BadArgumentError('the PV name contains a NUL character', name);
      const cid = this.nextCid;
      this.nextCid = (this.nextCid + 1) & 0x7fffffff || 1;
      ch = new PvaChannel(this, cid, name);
      this.channels.set(name, ch);
      this.searcher().add(ch);
    }
    ch.retain();
    return ch;
  }

  protected searcher(): PvaSearcher {
    if (!this.udp) {
      const udp = new PvaSearcher(
        this.config,
        (t, host, port, tls) => this.onFound(t, host, port, tls),
        (bytes) => this.nameServers.search(bytes, 1),
      );
      this.udp = udp;
      this.beacons = new PvaBeacons(
        this.config.broadcastPort,
        (server) => {
          if (log.isLevelEnabled('debug'))
            log.debug(
              { server, searching: udp.searching },
              udp.searching ? 'PVA beacon of a new or changed server: searching again' : 'PVA beacon of a new or changed server',
            );
          udp.searchAgain();
        },
        beaconBindings(this.config.interfaces, this.config.searchDestinations),
      );
      this.nameServers.start();
    }
    return this.udp;
  }

  private onFound(t: PvaSearchTarget, host: string, port: number, tls: boolean): void {
    const ch = t as PvaChannel;
    if (ch.state !== 'searching' || this.isClosed) return;
    const server = hostPort(host, port);
    if (!tls && this.config.tls?.required) {
      const e = new TlsError('ERR_EPICS_TLS_REQUIRED', `TLS is required and the server answered with plain TCP only (${server})`);
      return ch.refused(e);
    }
    if (tls && !this.tls)
      return ch.refused(new TlsError('ERR_EPICS_TLS', `the server answered with TLS, which was not offered (${server})`));
    // A server's TLS and TCP ports differ; the key tells them apart anyway.
    const key = tls ? `tls ${server}` : server;
    let c = this.circuits.get(key);
    if (!c) {
      c = new PvaCircuit(
        host,
        port,
        this.config,
        {
          onReady: () => {},
          onClose: (pc, reason, detail) => this.onCircuitClose(key, pc, reason, detail),
        },
        tls ? this.tls : undefined,
      );
      this.circuits.set(key, c);
    }
    ch.found(c);
  }

  private onCircuitClose(key: string, c: PvaCircuit, reason: CloseReason, detail: string): void {
    if (this.circuits.get(key) === c) this.circuits.delete(key);
    if (reason !== 'closed') log.info({ server: c.key, reason, detail, tls: c.tlsSettings !== undefined }, 'PVA connection closed');
    let tlsFailure = reason === 'tls' ? tlsErrorOf(c.tlsCode, detail, c.key, c.tlsSettings?.identity !== undefined) : undefined;
    // A server that closes a connection before validating it is not connected to again at once:
    // its channels back off as after a failed connect. (A pvxs server that requires a client
    // certificate accepts the TLS handshake without one, then closes: hundreds of times a second
    // otherwise.)
    if (reason === 'disconnected' && !c.session.ready) {
      reason = 'connect-failed';
      if (c.tlsSettings && c.tlsSettings.identity === undefined)
        tlsFailure = new TlsError(
          'ERR_EPICS_TLS_CERT_REQUIRED',
          `the server closed the TLS connection before validating it: it may require a client certificate, and the keychain has none (${c.key})`,
        );
    }
    this.connectionLost(c.key, reason, detail, (r) => c.session.close(r), tlsFailure);
  }

  close(): void {
    if (this.isClosed) return;
    this.closeChannels();
    for (const c of [...this.circuits.values()]) c.close();
    this.circuits.clear();
    this.nameServers.close();
  }

  stats(): PvaManagerStats {
    const connections = [...this.circuits.values()].map((c) => {
      const out: PvaConnectionStats = { server: c.key, tls: c.tlsSettings !== undefined };
      const identity = c.session.authMethod;
      if (identity !== undefined) out.identity = identity;
      if (identity === 'x509' && c.tlsSettings?.identity !== undefined) out.as = c.tlsSettings.identity;
      const peer = c.peerName;
      if (peer !== undefined) out.peer = peer;
      return out;
    });
    return { ...this.statsWith(this.circuits.size, this.nameServers.stats()), connections };
  }
}
