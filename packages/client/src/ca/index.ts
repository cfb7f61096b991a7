// The Channel Access codecs, exported as "epics-client/ca": constants, the header, message and DBR
// encode/decode and the search datagram helpers. Sans-I/O; the circuit and framer stay internal.
export * from './constants.js';
export * from './header.js';
export * from './messages.js';
export * from './dbr.js';
export * from './dbr-encode.js';
export { ByteWriter } from '../wire/byte-writer.js';
export {
  MAX_NAME_BYTES,
  intToIpv4,
  ipv4ToInt,
  parseSearchReplies,
  searchMessageSize,
  writeSearchRequest,
  writeSearchVersion,
  type SearchReplyHandler,
} from './search.js';
