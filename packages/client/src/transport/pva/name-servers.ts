// PV Access name servers (EPICS_PVA_NAME_SERVERS), as pvxs has them, on the keeper both protocols
// share (../name-servers.ts): a connection to each, validated like any other, that carries the
// SEARCH messages (flagged unicast) and hands the replies back.
import { hostPort } from '../addresses.js';
import { NameServers } from '../name-servers.js';
import type { PvaConfig } from './config.js';
import { PvaCircuit } from './tcp.js';

/**
 * A name server's reply: `found` or not, for `ids`, the server at `address` (16 bytes; :: or
 * 0.0.0.0: `host`, the name server's own) and `port` (0: the name server's), over `protocol`.
 */
export type PvaNameServerReply = (found: boolean, ids: number[], address: Uint8Array, port: number, host: string, protocol: string) => void;

/** The PVA name servers of `config`; `onReady`: one (re)connected and takes searches. */
export function pvaNameServers(config: PvaConfig, reply: PvaNameServerReply, onReady: () => void): NameServers<PvaCircuit> {
  const endpoints = config.nameServers.map((a) => ({ host: a.host, port: a.port, key: hostPort(a.host, a.port) }));
  return new NameServers<PvaCircuit>(
    'PVA',
    endpoints,
    (i, link) => {
      const { host, port } = endpoints[i]!;
      return new PvaCircuit(host, port, config, {
        onReady: () => link.ready(),
        onClose: (_c, reason, detail) => link.closed(reason, detail),
        searchResponse: (m) => {
          if (m.found) link.answered();
          reply(m.found, m.ids, m.address, m.port || port, host, m.protocol);
        },
      });
    },
    (c, bytes) => c.session.sendRaw(bytes),
    onReady,
  );
}
