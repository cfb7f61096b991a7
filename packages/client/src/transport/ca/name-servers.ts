// Channel Access name servers (EPICS_CA_NAME_SERVERS), as libca has them, on the keeper both
// protocols share (../name-servers.ts): a circuit to each, opened like any other (VERSION,
// HOST_NAME, CLIENT_NAME), that carries SEARCH requests once its server told a protocol version
// that takes them (4.12 or later) and hands the replies back.
import { TCP_SEARCH_MIN_VERSION } from '../../ca/search.js';
import { getLogger } from '../../log.js';
import { NameServers } from '../name-servers.js';
import type { CaConfig } from './config.js';
import { TcpCircuit } from './tcp.js';

const log = getLogger('nameservers');

/**
 * A name server answered for `cid`: the server is at `address` (an IPv4 uint32; 0 or 0xffffffff:
 * `host`, the name server's own address) and `port`.
 */
export type CaNameServerReply = (cid: number, address: number, port: number, host: string) => void;

/** The CA name servers of `config`; `onReady`: one (re)connected and takes searches. */
export function caNameServers(config: CaConfig, reply: CaNameServerReply, onReady: () => void): NameServers<TcpCircuit> {
  const endpoints = config.nameServers.map((ep) => ({ ...ep, key: `${ep.host}:${ep.port}` }));
  return new NameServers<TcpCircuit>(
    'CA',
    endpoints,
    (i, link) => {
      const { host, port } = endpoints[i]!;
      const c: TcpCircuit = new TcpCircuit(host, port, config, {
        onConnect: () => {},
        onVersion: (_t, minor) => {
          if (minor >= TCP_SEARCH_MIN_VERSION) return link.ready();
          log.warn(
            `CA name server ${host}:${port} speaks CA 4.${minor}: it takes no search over TCP (4.${TCP_SEARCH_MIN_VERSION} or later does)`,
          );
        },
        onSearchReply: (_t, cid, address, replyPort) => {
          link.answered();
          reply(cid, address, replyPort, c.remoteAddress ?? host);
        },
        onClose: (_t, reason, detail) => link.closed(reason, detail),
      });
      return c;
    },
    (c, bytes) => c.circuit.sendEncoded(bytes),
    onReady,
  );
}
