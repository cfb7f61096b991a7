// Byte-vector tests of every message in both directions, against bytes caproto produces.
import { describe, expect, it } from 'vitest';
import {
  ByteWriter,
  DbrType,
  Eca,
  decodeDbr,
  decodeRequest,
  decodeResponse,
  emptyHeader,
  encode,
  encodeCreateChan,
  encodeReadNotify,
  readHeader,
  type Message,
  type RequestMessage,
  type ResponseMessage,
} from '../../src/ca/index.js';
import { Framer } from '../../src/ca/framer.js';
import { VECTORS } from '../helpers/ca-vectors.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const IP_127 = 0x7f000001;

function split(h: string): { header: ReturnType<typeof emptyHeader>; payload: Uint8Array } {
  const b = bytes(h);
  const header = emptyHeader();
  const hs = readHeader(new DataView(b.buffer), 0, b.length, header);
  expect(hs).toBeGreaterThan(0);
  expect(b.length).toBe(hs + header.payloadSize);
  return { header, payload: b.subarray(hs) };
}

const requests: Array<[string, RequestMessage]> = [
  ['VersionRequest', { type: 'VersionRequest', priority: 0, version: 13 }],
  ['SearchRequest', { type: 'SearchRequest', name: 'TEST:CALC1', cid: 7, version: 13, reply: 5 }],
  ['CreateChanRequest', { type: 'CreateChanRequest', name: 'TEST:KIND:DOUBLE', cid: 3, version: 13 }],
  ['ClientNameRequest', { type: 'ClientNameRequest', name: 'alice' }],
  ['HostNameRequest', { type: 'HostNameRequest', name: 'host1' }],
  ['ReadNotifyRequest', { type: 'ReadNotifyRequest', dataType: 20, count: 1, sid: 5, ioid: 9 }],
  ['EventAddRequest', { type: 'EventAddRequest', dataType: 20, count: 1, sid: 5, subscriptionId: 2, mask: 5 }],
  ['EventCancelRequest', { type: 'EventCancelRequest', dataType: 20, count: 0, sid: 5, subscriptionId: 2 }],
  ['ClearChannelRequest', { type: 'ClearChannelRequest', sid: 5, cid: 3 }],
  ['EchoRequest', { type: 'EchoRequest' }],
  ['EventsOffRequest', { type: 'EventsOffRequest' }],
  ['EventsOnRequest', { type: 'EventsOnRequest' }],
  ['WriteNotifyRequest', { type: 'WriteNotifyRequest', dataType: 6, count: 1, sid: 5, ioid: 11, payload: bytes('400c000000000000') }],
  ['WriteRequest', { type: 'WriteRequest', dataType: 5, count: 1, sid: 5, ioid: 0, payload: bytes('0000000700000000') }],
  ['RepeaterRegisterRequest', { type: 'RepeaterRegisterRequest', address: IP_127 }],
];

const responses: Array<[string, ResponseMessage]> = [
  ['SearchResponse', { type: 'SearchResponse', port: 5064, address: IP_127, cid: 7, version: 13 }],
  ['NotFoundResponse', { type: 'NotFoundResponse', cid: 7, version: 13 }],
  ['CreateChanResponse', { type: 'CreateChanResponse', dataType: 6, count: 1, cid: 3, sid: 5 }],
  ['AccessRightsResponse', { type: 'AccessRightsResponse', cid: 3, rights: 3 }],
  ['CreateChFailResponse', { type: 'CreateChFailResponse', cid: 3 }],
  ['ServerDisconnResponse', { type: 'ServerDisconnResponse', cid: 3 }],
  ['WriteNotifyResponse', { type: 'WriteNotifyResponse', dataType: 6, count: 1, status: 1, ioid: 11 }],
  ['ClearChannelResponse', { type: 'ClearChannelResponse', sid: 5, cid: 3 }],
  ['RepeaterConfirmResponse', { type: 'RepeaterConfirmResponse', address: IP_127 }],
  ['Beacon', { type: 'Beacon', version: 13, port: 5064, beaconId: 42, address: IP_127 }],
  [
    'ErrorResponse',
    {
      type: 'ErrorResponse',
      cid: 3,
      status: Eca.ECA_BADTYPE!,
      message: 'bad type',
      request: { command: 15, payloadSize: 0, dataType: 6, dataCount: 1, param1: 5, param2: 9 },
    },
  ],
];

describe('requests (client -> server)', () => {
  it.each(requests)('%s encodes to the reference bytes and decodes back', (name, msg) => {
    const ref = VECTORS[name]!;
    expect(hex(encode(msg))).toBe(ref);
    const { header, payload } = split(ref);
    const back = decodeRequest(header, payload) as Message;
    if ('payload' in msg) {
      expect(back).toMatchObject({ ...msg, payload: expect.anything() });
      expect(hex((back as { payload: Uint8Array }).payload)).toBe(hex(msg.payload));
    } else expect(back).toEqual(msg);
  });

  it('a search VERSION carries the sequence number flag', () => {
    const b = encode({ type: 'VersionRequest', priority: 0, version: 13, sequence: 77 });
    expect(hex(b)).toBe('000000000001000d0000004d00000000');
    const { header, payload } = split(hex(b));
    expect(decodeRequest(header, payload)).toEqual({ type: 'VersionRequest', priority: 0, version: 13, sequence: 77 });
  });

  it('the hot-path writers stay correct while the writer grows under them', () => {
    const w = new ByteWriter(40); // the first READ_NOTIFY makes it grow
    for (let i = 0; i < 200; i++) {
      encodeCreateChan(w, `TEST:CALC${i}`, i, 13);
      encodeReadNotify(w, 20, 1, 1000 + i, i); // DBR_TIME_DOUBLE
    }
    const got: RequestMessage[] = [];
    new Framer(
      (h, p) => got.push(decodeRequest(h, p) as RequestMessage),
      () => {},
    ).push(w.take());
    expect(got).toHaveLength(400);
    for (let i = 0; i < 200; i++) {
      expect(got[2 * i]).toEqual({ type: 'CreateChanRequest', name: `TEST:CALC${i}`, cid: i, version: 13 });
      expect(got[2 * i + 1]).toMatchObject({ type: 'ReadNotifyRequest', dataType: 20, count: 1, sid: 1000 + i, ioid: i });
    }
  });

  it('a message without payload whose count needs the extended header takes 24 bytes', () => {
    const b = encode({ type: 'CreateChanResponse', dataType: 6, count: 100_000, cid: 1, sid: 2 });
    expect(b.length).toBe(24);
    const h = emptyHeader();
    expect(readHeader(new DataView(b.buffer, b.byteOffset, b.length), 0, b.length, h)).toBe(24);
    expect(h).toMatchObject({ dataType: 6, dataCount: 100_000, payloadSize: 0 });
  });

  it('an unknown command decodes as Invalid, not a throw', () => {
    const h = { ...emptyHeader(), command: 99 };
    expect(decodeRequest(h, new Uint8Array(0)).type).toBe('Invalid');
    expect(decodeResponse(h, new Uint8Array(0)).type).toBe('Invalid');
  });
});

describe('responses (server -> client)', () => {
  it.each(responses)('%s encodes to the reference bytes and decodes back', (name, msg) => {
    const ref = VECTORS[name]!;
    expect(hex(encode(msg))).toBe(ref);
    const { header, payload } = split(ref);
    expect(decodeResponse(header, payload)).toEqual(msg);
  });

  it('VERSION response decodes with its version and sequence', () => {
    const b = encode({ type: 'VersionResponse', version: 13, priority: 1, sequence: 4 });
    const { header, payload } = split(hex(b));
    expect(decodeResponse(header, payload)).toEqual({ type: 'VersionResponse', version: 13, priority: 1, sequence: 4 });
  });
});

describe('data responses (DBR payloads)', () => {
  const dataOf = (name: string): { dataType: number; count: number; payload: Uint8Array; status: number } => {
    const { header, payload } = split(VECTORS[name]!);
    const m = decodeResponse(header, payload);
    if (m.type !== 'ReadNotifyResponse' && m.type !== 'EventAddResponse') throw new Error(m.type);
    return m;
  };

  it('TIME_DOUBLE: value, alarm, timestamp', () => {
    const m = dataOf('ReadNotifyResponse_TIME_DOUBLE');
    expect(m.status).toBe(1);
    const r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(42.25);
    expect([r.status, r.severity, r.secondsPastEpoch, r.nanoseconds]).toEqual([3, 1, 1000, 500000000]);
    expect(r.timestamp!.toISOString()).toBe('1990-01-01T00:16:40.500Z');
  });

  it('TIME_SHORT array of 3 (EVENT_ADD)', () => {
    const m = dataOf('EventAddResponse_TIME_SHORT3');
    const r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBeInstanceOf(Int16Array);
    expect([...(r.value as Int16Array)]).toEqual([1, -2, 3]);
    expect([r.secondsPastEpoch, r.nanoseconds]).toEqual([7, 8]);
  });

  it('CTRL_DOUBLE metadata', () => {
    const m = dataOf('ReadNotifyResponse_CTRL_DOUBLE');
    const r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(1.5);
    expect(r.severity).toBe(2);
    expect(r.metadata).toEqual({
      precision: 3,
      units: 'mm',
      upperDisplayLimit: 10,
      lowerDisplayLimit: -10,
      upperAlarmLimit: 9,
      upperWarningLimit: 8,
      lowerWarningLimit: -8,
      lowerAlarmLimit: -9,
      upperControlLimit: 5,
      lowerControlLimit: -5,
    });
  });

  it('CTRL_ENUM state strings', () => {
    const m = dataOf('ReadNotifyResponse_CTRL_ENUM');
    const r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(2);
    expect(r.metadata?.enumStrings).toEqual(['Off', 'On', 'Fault']);
  });

  it('TIME_STRING, TIME_CHAR as bytes and as a long string, TIME_ENUM', () => {
    let m = dataOf('ReadNotifyResponse_TIME_STRING');
    expect(decodeDbr(m.dataType, m.count, m.payload)!.value).toBe('hello');
    m = dataOf('ReadNotifyResponse_TIME_CHAR');
    expect([...(decodeDbr(m.dataType, m.count, m.payload)!.value as Uint8Array)]).toEqual([97, 98, 99, 0]);
    expect(decodeDbr(m.dataType, m.count, m.payload, { longString: true })!.value).toBe('abc');
    m = dataOf('ReadNotifyResponse_TIME_ENUM');
    const r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect([r.value, r.secondsPastEpoch, r.nanoseconds]).toEqual([1, 3, 4]);
  });

  it('GR_LONG, CTRL_FLOAT, CTRL_CHAR, CTRL_SHORT, STS_CHAR, STS_DOUBLE', () => {
    let m = dataOf('ReadNotifyResponse_GR_LONG');
    let r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect([r.value, r.status, r.severity]).toEqual([-7, 1, 2]);
    expect(r.metadata).toMatchObject({ units: 'cts', upperDisplayLimit: 100, lowerAlarmLimit: -90 });
    expect(r.metadata?.upperControlLimit).toBeUndefined();
    m = dataOf('ReadNotifyResponse_CTRL_FLOAT');
    r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(0.5);
    expect(r.metadata).toMatchObject({ precision: 2, units: 'V', upperControlLimit: 0.75, lowerControlLimit: -0.75 });
    m = dataOf('ReadNotifyResponse_CTRL_CHAR');
    r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(200);
    expect(r.metadata).toMatchObject({ units: 'u', upperDisplayLimit: 250, upperControlLimit: 240, lowerControlLimit: 1 });
    m = dataOf('ReadNotifyResponse_CTRL_SHORT');
    r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect(r.value).toBe(-300);
    expect(r.metadata).toMatchObject({ units: 's', upperDisplayLimit: 1000, lowerControlLimit: -500 });
    m = dataOf('ReadNotifyResponse_STS_CHAR');
    r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect([r.value, r.status, r.severity]).toEqual([9, 4, 1]);
    m = dataOf('ReadNotifyResponse_STS_DOUBLE');
    r = decodeDbr(m.dataType, m.count, m.payload)!;
    expect([r.value, r.status, r.severity]).toEqual([2.5, 4, 1]);
  });

  it('a payload too short for its count is rejected, not read past', () => {
    expect(decodeDbr(DbrType.DOUBLE, 4, new Uint8Array(16))).toBeUndefined();
    expect(decodeDbr(99, 1, new Uint8Array(16))).toBeUndefined();
  });
});
