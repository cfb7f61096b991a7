// The sans-I/O Channel Access protocol core, exported as "epicsperf/ca": constants, headers,
// messages, DBR payloads, the framer, the client circuit state and the search helpers.
export * from './constants.js';
export * from './header.js';
export * from './messages.js';
export * from './dbr.js';
export * from './dbr-encode.js';
export * from './framer.js';
export * from './circuit.js';
export * from './search.js';
export { ByteWriter } from './writer.js';
export { byteSwap, installSwappers, type Swapper } from './swap.js';
