// The sans-I/O PV Access codecs, exported as "epics-client/pva" (the framer and session stay internal):
// constants, the header, pvData (types, values, bitsets, status), messages, pvRequest, normative types.
export * from './constants.js';
export { DecodeError, Reader, Writer } from './buffer.js';
export * from './types.js';
export * from './values.js';
export * from './updates.js';
export { BitSet } from './bitset.js';
export * from './header.js';
export * from './status.js';
export * from './messages.js';
export { addressOf, decodeTyped, encodeTyped, ipv4Mapped, ipv4Of, SearchFlags } from './messages-session.js';
export * from './pvrequest.js';
export * from './nt.js';
export { isTyped, typedOf } from './infer.js';
