// The sans-I/O PV Access protocol core: pvData (types, values, bitsets), the header, every
// message a client exchanges, the framer, pvRequest building and normative-type conversion.
export * from './constants.js';
export { DecodeError, Reader, Writer } from './buffer.js';
export * from './types.js';
export * from './values.js';
export { BitSet } from './bitset.js';
export * from './header.js';
export * from './status.js';
export * from './messages.js';
export { decodeTyped, encodeTyped, ipv4Mapped, ipv4Of, SearchFlags } from './messages-session.js';
export * from './framer.js';
export * from './pvrequest.js';
export * from './nt.js';
