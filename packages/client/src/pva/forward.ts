// Local forwarding of PV Access datagrams among the processes of one host, as pvxs does it: a
// unicast datagram reaches only one of the sockets sharing the UDP port, so its receiver passes it
// on to the local multicast group 224.0.0.128 behind an ORIGIN_TAG message naming the address it
// was sent to. Pure: what a datagram is, and the bytes of its forwarded form.
import { Cmd, Flags, HEADER_SIZE } from './constants.js';
import { emptyHeader, readHeader, type PvaHeader } from './header.js';
import { ipv4Mapped, ipv4Of, SearchFlags } from './messages-session.js';

/** The group forwarded datagrams go to, on the loopback interface only (as pvxs). */
export const LOCAL_MCAST_GROUP = '224.0.0.128';

/** ORIGIN_TAG: a header and the 16-byte address the datagram was first sent to. */
const ORIGIN_TAG_SIZE = HEADER_SIZE + 16;
/** Offsets in a SEARCH message: flags, reply address. */
const SEARCH_FLAGS_AT = HEADER_SIZE + 4;
const SEARCH_ADDRESS_AT = HEADER_SIZE + 8;
const SEARCH_MIN_SIZE = SEARCH_ADDRESS_AT + 18;
/** Offset of a BEACON's server address (after GUID, flags, sequence and change count). */
const BEACON_ADDRESS_AT = HEADER_SIZE + 16;
const BEACON_MIN_SIZE = BEACON_ADDRESS_AT + 18;

/** What a datagram arriving on the broadcast port is. */
export interface Datagram {
  /** The first message's command (after an ORIGIN_TAG, the tagged one's), or -1 if malformed. */
  command: number;
  /** Where the message starts in the datagram. */
  offset: number;
  /** The address the datagram was first sent to, when it came forwarded with an ORIGIN_TAG. */
  origin?: string;
  header: PvaHeader;
}

/**
 * Read the first message of a datagram (skipping one leading ORIGIN_TAG, whose address it keeps).
 * Control and segmented messages never come by UDP: they read as malformed.
 */
export function readDatagram(bytes: Uint8Array): Datagram {
  const h = emptyHeader();
  const out: Datagram = { command: -1, offset: 0, header: h };
  if (!readOne(bytes, 0, h)) return out;
  if (h.command === Cmd.ORIGIN_TAG) {
    if (h.payloadSize < 16) return out;
    out.origin = ipv4Of(bytes.subarray(HEADER_SIZE, HEADER_SIZE + 16)) ?? 'ipv6';
    out.offset = HEADER_SIZE + h.payloadSize;
    if (!readOne(bytes, out.offset, h) || h.command === Cmd.ORIGIN_TAG) return out;
  }
  out.command = h.command;
  return out;
}

function readOne(bytes: Uint8Array, at: number, h: PvaHeader): boolean {
  if (bytes.length - at < HEADER_SIZE || !readHeader(bytes, at, h)) return false;
  if (h.flags & (Flags.CONTROL | Flags.SEGMENT_MASK)) return false;
  return at + HEADER_SIZE + h.payloadSize <= bytes.length;
}

/**
 * The forwarded form of a SEARCH or BEACON received by unicast at `dest` from `source` (both
 * dotted IPv4): an ORIGIN_TAG naming `dest`, then the message itself with its address field set
 * to `source` where the sender left it empty (a receiver of the forwarded copy cannot see the
 * sender), and a search's unicast flag cleared. Undefined for anything else, or anything
 * already forwarded.
 */
export function forwardedForm(bytes: Uint8Array, dest: string, source: string): Uint8Array | undefined {
  const d = readDatagram(bytes);
  if (d.origin !== undefined || d.offset !== 0) return undefined;
  const size = HEADER_SIZE + d.header.payloadSize;
  let addressAt: number;
  if (d.command === Cmd.SEARCH && size >= SEARCH_MIN_SIZE) addressAt = SEARCH_ADDRESS_AT;
  else if (d.command === Cmd.BEACON && size >= BEACON_MIN_SIZE) addressAt = BEACON_ADDRESS_AT;
  else return undefined;
  const out = new Uint8Array(ORIGIN_TAG_SIZE + size);
  // The tag in big-endian order, as pvxs writes it.
  out.set([0xca, 2, Flags.BIG_ENDIAN, Cmd.ORIGIN_TAG, 0, 0, 0, 16]);
  out.set(ipv4Mapped(dest), HEADER_SIZE);
  const msg = out.subarray(ORIGIN_TAG_SIZE);
  msg.set(bytes.subarray(0, size));
  const address = msg.subarray(addressAt, addressAt + 16);
  const ip = ipv4Of(address);
  if (ip === '0.0.0.0') address.set(ipv4Mapped(source));
  if (d.command === Cmd.SEARCH) msg[SEARCH_FLAGS_AT] = msg[SEARCH_FLAGS_AT]! & ~SearchFlags.UNICAST;
  return out;
}
