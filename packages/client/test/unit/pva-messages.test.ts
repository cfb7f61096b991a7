// Messages: every captured message decodes and re-encodes to the same bytes; the decoded
// contents match what the IOC holds; both byte orders; hand-made vectors for the rest.
import { describe, expect, it } from 'vitest';
import {
  BitSet,
  buildPvRequest,
  Cmd,
  decodeMessage,
  encodeMessage,
  encodeMessages,
  ipv4Mapped,
  ipv4Of,
  OK,
  StatusType,
  Sub,
  toNT,
  typedOf,
  Writer,
  type Message,
  type PvStructure,
  type StructureDesc,
} from '../../src/pva/index.js';
import { bytes, FIXTURES, headerOf, hex, loadFixture, Replay, replay } from '../helpers/pva-fixtures.js';

const find = <T extends string>(name: string, type: T) =>
  replay(name)
    .map((x) => x.decoded)
    .filter((d): d is Extract<typeof d, { type: T }> => d.type === type);

describe('captured exchanges', () => {
  it.each(FIXTURES)('%s: every message decodes and re-encodes byte for byte', (name) => {
    for (const { msg, decoded } of replay(name)) {
      expect(decoded.type, hex(msg.bytes)).not.toBe('Invalid');
      expect(decoded.type, hex(msg.bytes)).not.toBe('Unknown');
      const w = new Writer(!(msg.bytes[2]! & 0x80));
      encodeMessage(w, decoded as Message);
      expect(hex(w.take())).toBe(hex(msg.bytes));
    }
  });

  it('handshake: byte order, auth methods, "ca" auth reply, validated', () => {
    const all = replay('get').map((x) => x.decoded);
    expect(all[0]).toEqual({ type: 'SetByteOrder', bigEndian: false });
    expect(all[1]).toEqual({
      type: 'ConnectionValidationRequest',
      bufferSize: 65536,
      registrySize: 0x7fff,
      authMethods: ['anonymous', 'ca'],
    });
    const v = all[2];
    expect(v?.type).toBe('ConnectionValidationResponse');
    if (v?.type === 'ConnectionValidationResponse') {
      expect(v.authMethod).toBe('ca');
      expect(Object.keys(v.authData?.value as object)).toEqual(['user', 'host']);
    }
    expect(all[3]).toEqual({ type: 'ConnectionValidated', status: OK });
  });

  it('GET values of each kind, as normative types', () => {
    const data = find('get', 'DataResponse');
    const nt = data.map((d) => toNT(d.valueType!, d.value!));
    const [dbl, lng, arr, str, enm, larr] = nt;
    expect(dbl).toMatchObject({
      kind: 'NTScalar',
      value: 3.14159,
      display: { units: 'mm', precision: 4 },
      control: { limitLow: -100, limitHigh: 100 },
    });
    expect(lng).toMatchObject({ kind: 'NTScalar', value: 42, display: { units: 'counts' } });
    expect(arr?.kind).toBe('NTScalarArray');
    expect(Array.from((arr as { value: Float64Array }).value)).toEqual([0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10, 11.25]);
    expect(str).toMatchObject({ kind: 'NTScalar', value: 'hello epics' });
    expect(enm).toMatchObject({ kind: 'NTEnum', value: { index: 1, choices: ['Off', 'On', 'Fault'] } });
    expect((larr as { value: Int32Array }).value).toEqual(new Int32Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => i * 100000)));
    expect((dbl as { timeStamp: { secondsPastEpoch: number } }).timeStamp.secondsPastEpoch).toBeGreaterThan(1.6e9);
  });

  it('PUT: init, get-back, put of value only (bit 1), done', () => {
    const puts = find('put', 'PutRequest');
    expect(puts.map((p) => [p.changed.toArray(), (p.value as PvStructure).value])).toEqual([
      [[1], 43],
      [[1], 42],
    ]);
    const done = find('put', 'OpResponse').filter((m) => m.command === Cmd.PUT);
    expect(done.map((d) => d.status)).toEqual([OK, OK]);
  });

  it('MONITOR: pipelined init with queue size, start, updates with changed and overrun bitsets, ack', () => {
    const init = find('monitor', 'OpInitRequest')[0]!;
    expect(init).toMatchObject({ command: Cmd.MONITOR, subcommand: Sub.INIT | Sub.PIPELINE, queueSize: 4 });
    expect(hex(new Uint8Array(encodeMessages([init])))).toContain(hex(bytes('0020001088')));
    const start = find('monitor', 'OpRequest').find((m) => m.command === Cmd.MONITOR);
    expect(start?.subcommand).toBe(Sub.START);
    const ups = find('monitor', 'MonitorUpdate');
    expect(ups.length).toBe(3);
    const vals = ups.map((u) => (u.value as PvStructure).value as number);
    expect(vals[1]! - vals[0]!).toBe(1);
    expect(ups.every((u) => u.overrun?.isEmpty())).toBe(true);
    expect(find('monitor', 'MonitorAck')[0]).toMatchObject({ nfree: 2 });
  });

  it('monitor updates: each a new value on the last one, which is kept unchanged', () => {
    const r = new Replay();
    const kept = new Map<number, PvStructure>();
    let last: PvStructure | undefined;
    let lastCopy: PvStructure | undefined;
    for (const { bytes: b } of loadFixture('monitor')) {
      const h = headerOf(b);
      const m = decodeMessage(h, b.subarray(8, 8 + (h.flags & 1 ? 0 : h.payloadSize)), {
        types: r.serverTypes,
        operation: (id) => {
          const t = r.ops.get(id);
          if (!t) return undefined;
          return { type: t, value: kept.get(id) };
        },
      });
      if (m.type === 'OpInitResponse' && m.valueType?.kind === 'structure') r.ops.set(m.requestId, m.valueType);
      if (m.type === 'MonitorUpdate' && m.value) {
        // Each update is a new value on the last one, which stays as it was.
        if (last) expect(last).toStrictEqual(lastCopy);
        kept.set(m.requestId, m.value);
        last = m.value;
        lastCopy = structuredClone(m.value);
      }
    }
    expect(last).toStrictEqual(lastCopy);
    // The first update carried the alarm (MINOR, HIGH); later ones only value and timeStamp.
    expect(last?.alarm).toMatchObject({ severity: 1, message: 'HIGH' });
    expect(typeof last?.value).toBe('number');
  });

  it('GET_FIELD, error statuses, echo', () => {
    const gf = find('getfield-errors', 'GetFieldResponse');
    expect(gf[0]?.valueType).toMatchObject({ kind: 'structure', id: 'epics:nt/NTScalar:1.0' });
    const ch = find('getfield-errors', 'CreateChannelResponse');
    expect(ch[1]?.status).toEqual({ type: StatusType.FATAL, message: 'Refused to create Channel', callTree: 'pvx:serv:refusechan:' });
    const init = find('getfield-errors', 'OpInitResponse')[0]!;
    expect(init.status).toEqual({ type: StatusType.ERROR, message: 'pvRequest must select at least one field', callTree: '' });
    expect(init.valueType).toBeNull();
    expect(find('getfield-errors', 'EchoResponse')[0]?.payload).toEqual(new Uint8Array(Buffer.from('ping')));
    expect(find('getfield-errors', 'ControlEchoRequest')[0]).toEqual({ type: 'ControlEchoRequest', data: 0x12345678 });
  });

  it('UDP search and response in both byte orders', () => {
    const all = replay('udp-search').map((x) => x.decoded);
    for (const i of [0, 2])
      expect(all[i]).toMatchObject({
        type: 'SearchRequest',
        sequenceId: 0x01020304,
        flags: 0x81,
        protocols: ['tcp'],
        channels: [
          { id: 7, name: 'TEST:KIND:LONG' },
          { id: 8, name: 'TEST:KIND:ENUM' },
        ],
      });
    for (const i of [1, 3])
      expect(all[i]).toMatchObject({ type: 'SearchResponse', sequenceId: 0x01020304, protocol: 'tcp', found: true, ids: [7, 8] });
    const resp = all[1];
    if (resp?.type === 'SearchResponse') expect(ipv4Of(resp.address)).toBe('0.0.0.0');
  });
});

/** One of every message, encoded in both byte orders and decoded back. */
const typeDesc = buildPvRequest('field(value)').type;
const SAMPLES: Message[] = [
  { type: 'SetByteOrder', bigEndian: true },
  { type: 'ControlEchoRequest', data: 7 },
  { type: 'ControlEchoResponse', data: 7 },
  { type: 'ConnectionValidationRequest', bufferSize: 16384, registrySize: 0x7fff, authMethods: ['anonymous', 'ca'] },
  { type: 'ConnectionValidationResponse', bufferSize: 16384, registrySize: 0x7fff, qos: 0, authMethod: 'anonymous', authData: null },
  { type: 'ConnectionValidated', status: { type: StatusType.ERROR, message: 'denied', callTree: 'here' } },
  {
    type: 'SearchRequest',
    sequenceId: 5,
    flags: 0x81,
    responseAddress: ipv4Mapped('127.0.0.1'),
    responsePort: 5076,
    protocols: ['tcp'],
    channels: [{ id: 1, name: 'a' }],
  },
  {
    type: 'SearchResponse',
    guid: new Uint8Array(12).fill(3),
    sequenceId: 5,
    address: ipv4Mapped('10.0.0.2'),
    port: 5075,
    protocol: 'tcp',
    found: false,
    ids: [1, 2],
  },
  {
    type: 'Beacon',
    guid: new Uint8Array(12).fill(1),
    flags: 0,
    sequenceId: 9,
    changeCount: 2,
    address: ipv4Mapped('10.0.0.2'),
    port: 5075,
    protocol: 'tcp',
    serverStatus: null,
  },
  { type: 'EchoRequest', payload: new Uint8Array([1, 2, 3]) },
  { type: 'EchoResponse', payload: new Uint8Array([1, 2, 3]) },
  { type: 'CreateChannelRequest', channels: [{ id: 3, name: 'TEST:KIND:DOUBLE' }] },
  { type: 'CreateChannelResponse', cid: 3, sid: 77, status: OK },
  { type: 'DestroyChannelRequest', sid: 77, cid: 3 },
  { type: 'DestroyChannelResponse', sid: 77, cid: 3 },
  { type: 'AclChange', cid: 3, permissions: 1 },
  { type: 'OpInitRequest', command: Cmd.GET, sid: 77, requestId: 9, subcommand: Sub.INIT, pvRequest: buildPvRequest('field(value)') },
  { type: 'OpInitResponse', command: Cmd.GET, requestId: 9, subcommand: Sub.INIT, status: OK, valueType: typeDesc },
  { type: 'OpRequest', command: Cmd.GET, sid: 77, requestId: 9, subcommand: Sub.EXEC },
  { type: 'OpRequest', command: Cmd.MONITOR, sid: 77, requestId: 9, subcommand: Sub.STOP },
  {
    type: 'OpResponse',
    command: Cmd.PUT,
    requestId: 9,
    subcommand: 0,
    status: { type: StatusType.WARNING, message: 'clipped', callTree: '' },
  },
  { type: 'MonitorAck', sid: 77, requestId: 9, nfree: 3 },
  { type: 'OpInitRequest', command: Cmd.RPC, sid: 77, requestId: 11, subcommand: Sub.INIT, pvRequest: buildPvRequest('') },
  { type: 'OpInitResponse', command: Cmd.RPC, requestId: 11, subcommand: Sub.INIT, status: OK, valueType: null },
  { type: 'RpcRequest', sid: 77, requestId: 11, subcommand: Sub.DESTROY, argument: typedOf({ a: 1.5, names: ['x', 'y'] }) },
  { type: 'RpcRequest', sid: 77, requestId: 11, subcommand: 0, argument: null },
  { type: 'RpcResponse', requestId: 11, subcommand: Sub.DESTROY, status: OK, result: typedOf({ sum: 3, n: 7n, ok: true }) },
  { type: 'RpcResponse', requestId: 11, subcommand: 0, status: OK, result: null },
  {
    type: 'RpcResponse',
    requestId: 11,
    subcommand: 0,
    status: { type: StatusType.ERROR, message: 'bad argument', callTree: '' },
    result: null,
  },
  { type: 'GetFieldRequest', sid: 77, requestId: 10, field: 'value' },
  { type: 'GetFieldResponse', requestId: 10, status: OK, valueType: typeDesc },
  { type: 'DestroyRequest', sid: 77, requestId: 9 },
  { type: 'CancelRequest', sid: 77, requestId: 9 },
  { type: 'ServerMessage', requestId: 9, messageType: 1, message: 'hello' },
];

describe('every message both ways, both byte orders', () => {
  it.each(SAMPLES.map((m) => [m.type, m] as const))('%s', (_t, m) => {
    for (const le of [true, false]) {
      const b = encodeMessages([m], le);
      const h = headerOf(b);
      if (m.type !== 'SetByteOrder') expect((h.flags & 0x80) !== 0).toBe(!le);
      const d = decodeMessage(h, b.subarray(8, h.flags & 1 ? 8 : 8 + h.payloadSize));
      expect(d).toEqual(m);
      expect(hex(encodeMessages([d as Message], le))).toBe(hex(b));
    }
  });

  it('PUT request, GET data and monitor update with a value type, both byte orders', () => {
    const type = find('get', 'OpInitResponse')[0]!.valueType as StructureDesc;
    const value = { value: 2.5 } as PvStructure;
    const msgs: Message[] = [
      { type: 'PutRequest', sid: 1, requestId: 2, subcommand: 0, changed: BitSet.of(1), valueType: type, value },
      { type: 'DataResponse', command: Cmd.GET, requestId: 2, subcommand: 0, status: OK, changed: BitSet.of(1), valueType: type, value },
      { type: 'MonitorUpdate', requestId: 2, subcommand: 0, changed: BitSet.of(1), overrun: BitSet.of(1), valueType: type, value },
    ];
    for (const le of [true, false]) {
      for (const m of msgs) {
        const b = encodeMessages([m], le);
        const h = headerOf(b);
        const d = decodeMessage(h, b.subarray(8), { operation: () => ({ type }) });
        expect((d as { value: PvStructure }).value.value).toBe(2.5);
        expect(hex(encodeMessages([d as Message], le))).toBe(hex(b));
      }
    }
  });

  it('a last PUT (DESTROY with data, as core-pva sends it) keeps its data; DESTROY alone carries none', () => {
    const type = find('get', 'OpInitResponse')[0]!.valueType as StructureDesc;
    const last: Message = {
      type: 'PutRequest',
      sid: 1,
      requestId: 2,
      subcommand: Sub.DESTROY,
      changed: BitSet.of(1),
      valueType: type,
      value: { value: 7 },
    };
    const b = encodeMessages([last]);
    const d = decodeMessage(headerOf(b), b.subarray(8), { operation: () => ({ type }) });
    expect(d).toMatchObject({ type: 'PutRequest', subcommand: Sub.DESTROY, value: { value: 7 } });
    const alone = encodeMessages([{ type: 'OpRequest', command: Cmd.PUT, sid: 1, requestId: 2, subcommand: Sub.DESTROY }]);
    expect(decodeMessage(headerOf(alone), alone.subarray(8))).toMatchObject({ type: 'OpRequest', subcommand: Sub.DESTROY });
  });

  it('data for a request no longer tracked is skipped, not an error', () => {
    const b = loadFixture('get').find((m) => m.dir === 's2c' && m.bytes[3] === Cmd.GET && m.bytes[12] === 0)!.bytes;
    const d = decodeMessage(headerOf(b), b.subarray(8));
    expect(d).toMatchObject({ type: 'DataResponse', status: OK });
    expect((d as { value?: unknown }).value).toBeUndefined();
  });

  it('truncated messages come back Invalid', () => {
    for (const { bytes: b } of loadFixture('get')) {
      const h = headerOf(b);
      if (h.flags & 1 || h.payloadSize === 0) continue;
      const r = new Replay();
      const d = decodeMessage(h, b.subarray(8, b.length - 1), { types: r.serverTypes, operation: () => undefined });
      if (d.type !== 'DataResponse' && d.type !== 'EchoRequest' && d.type !== 'EchoResponse') expect(d.type, hex(b)).toBe('Invalid');
    }
  });
});
