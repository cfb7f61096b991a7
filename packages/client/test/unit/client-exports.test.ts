// What each entry point of epics-client exports: the Context API, its types and errors from the
// main entry; the sans-I/O codecs only from ./ca and ./pva (no circuit, framer, session or swapper).
import { describe, expect, it } from 'vitest';
import * as main from '../../src/index.js';
import * as ca from '../../src/ca/index.js';
import * as pva from '../../src/pva/index.js';

describe('entry points', () => {
  it('the main entry: Context, snapshot, readings, errors and log channels', () => {
    for (const name of [
      'Context',
      'snapshot',
      'Reading',
      'PvaReading',
      'Monitor',
      'EpicsError',
      'TimeoutError',
      'LOG_LEVELS',
      'DBE_VALUE',
    ]) {
      expect(main, name).toHaveProperty(name);
    }
    // No alias of the pre-publication names.
    for (const name of ['ChannelManager', 'PvaManager', 'ClientCircuit', 'Framer', 'resolveConfig', 'getLogger', 'CaError']) {
      expect(main, name).not.toHaveProperty(name);
    }
  });

  it('epics-client/ca: constants, header, messages, DBR and search datagram codecs; no I/O-side internals', () => {
    for (const name of [
      'Cmd',
      'DbrType',
      'readHeader',
      'encodeMessage',
      'decodeResponse',
      'decodeDbr',
      'encodeDbr',
      'ByteWriter',
      'writeSearchRequest',
      'parseSearchReplies',
      'NATIVE_TYPE_NAMES',
    ]) {
      expect(ca, name).toHaveProperty(name);
    }
    for (const name of ['ClientCircuit', 'Framer', 'byteSwap', 'BeaconAnomalies', 'searchRetryDelay', 'DIRECT_READ_THRESHOLD']) {
      expect(ca, name).not.toHaveProperty(name);
    }
  });

  it('epics-client/pva: constants, header, pvData, messages, pvRequest and normative types; no framer or session', () => {
    for (const name of [
      'Cmd',
      'readHeader',
      'decodeMessage',
      'encodeMessage',
      'TypeCache',
      'decodeValue',
      'BitSet',
      'Reader',
      'Writer',
      'buildPvRequest',
      'toNT',
      'ipv4Of',
    ]) {
      expect(pva, name).toHaveProperty(name);
    }
    for (const name of ['Framer', 'ClientSession', 'CancelFence', 'CreateQueue', 'DEFAULT_MAX_PAYLOAD']) {
      expect(pva, name).not.toHaveProperty(name);
    }
  });
});
