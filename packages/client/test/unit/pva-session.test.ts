// The sans-I/O client session: handshake, channel create and destroy, GET with the DESTROY bit,
// GET replies and PUT get-backs with every field of the type (defaults where none was sent),
// monitor updates as new structures (the previous one unchanged, unmarked parts shared), acks,
// monitor INITs held behind a cancelled monitor until an echo's reply, the window of INITs in
// flight, interned types, failures
// on close, and protocol errors for malformed data. Server bytes come from the encoder.
import { describe, expect, it } from 'vitest';
import {
  BitSet,
  Cmd,
  decodeMessage,
  emptyHeader,
  encodeMessages,
  OK,
  readHeader,
  scalar,
  structure,
  Sub,
  TypeCache,
  type Message,
} from '../../src/pva/index.js';
import type { OpHandler, SessionChannel } from '../../src/pva/session.js';
import { session } from '../helpers/pva-session.js';

const TYPE = structure('epics:nt/NTScalar:1.0', {
  value: scalar('double'),
  timeStamp: structure('time_t', { secondsPastEpoch: scalar('long'), nanoseconds: scalar('int') }),
});

function ready() {
  const t = session();
  t.feed(
    { type: 'SetByteOrder', bigEndian: false },
    { type: 'ConnectionValidationRequest', bufferSize: 65536, registrySize: 32767, authMethods: ['anonymous', 'ca'] },
  );
  t.sent();
  t.feed({ type: 'ConnectionValidated', status: OK });
  return t;
}

const chan = (cid: number, name: string, log: string[]): SessionChannel => ({
  cid,
  name,
  onCreated: (sid) => log.push(`created ${sid}`),
  onCreateFailed: (st) => log.push(`failed ${st.message}`),
  onDestroyed: () => log.push('destroyed'),
});

describe('client session', () => {
  it('handshake: "ca" authentication with user and host; creates wait for validation', () => {
    const t = session();
    const log: string[] = [];
    t.s.createChannel(chan(5, 'PV:A', log));
    t.feed(
      { type: 'SetByteOrder', bigEndian: true },
      { type: 'ConnectionValidationRequest', bufferSize: 65536, registrySize: 32767, authMethods: ['anonymous', 'ca'] },
    );
    const [v] = t.sent();
    expect(v).toMatchObject({
      type: 'ConnectionValidationResponse',
      authMethod: 'ca',
      authData: { value: { user: 'alice', host: 'host1' } },
    });
    expect(t.s.ready).toBe(false);
    t.feed({ type: 'ConnectionValidated', status: OK });
    expect(t.validated()).toBe(1);
    expect(t.sent()).toEqual([{ type: 'CreateChannelRequest', channels: [{ id: 5, name: 'PV:A' }] }]);
    t.feed({ type: 'CreateChannelResponse', cid: 5, sid: 77, status: OK });
    expect(log).toEqual(['created 77']);
  });

  it('GET: INIT, execution with the DESTROY bit, a reply holding every field (defaults where none was sent); types are interned', () => {
    const t = ready();
    const got: unknown[] = [];
    const h: OpHandler = { onInit: (_st, type) => got.push(type), onReply: (_st, v) => got.push(v), onFail: (r) => got.push(r) };
    const id = t.s.init(Cmd.GET, 77, { type: structure('', {}), value: {} }, h);
    t.feed({ type: 'OpInitResponse', command: Cmd.GET, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.s.get(id, true);
    expect(t.sent().at(-1)).toMatchObject({ type: 'OpRequest', command: Cmd.GET, requestId: id, subcommand: Sub.DESTROY });
    t.feed({
      type: 'DataResponse',
      command: Cmd.GET,
      requestId: id,
      subcommand: Sub.DESTROY,
      status: OK,
      changed: BitSet.of(1),
      valueType: TYPE,
      value: { value: 2.5 },
    });
    expect(got[1]).toStrictEqual({ value: 2.5, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0 } });
    expect(t.s.pendingOps).toBe(0); // the server dropped it; nothing to destroy
    const id2 = t.s.init(Cmd.GET, 78, { type: structure('', {}), value: {} }, h);
    t.feed({ type: 'OpInitResponse', command: Cmd.GET, requestId: id2, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    expect(got[2]).toBe(got[0]); // the same bytes, the same type object
  });

  it('at most 500 creates wait for their replies; each reply lets the next one go', () => {
    const t = ready();
    const log: string[] = [];
    for (let cid = 1; cid <= 1200; cid++) t.s.createChannel(chan(cid, `PV:${cid}`, log));
    const first = t.sent();
    expect(first).toHaveLength(500);
    expect(first.at(-1)).toEqual({ type: 'CreateChannelRequest', channels: [{ id: 500, name: 'PV:500' }] });
    expect(t.sent()).toEqual([]);
    t.feed(
      { type: 'CreateChannelResponse', cid: 1, sid: 1, status: OK },
      { type: 'CreateChannelResponse', cid: 2, sid: 0, status: { type: 2, message: 'no such PV', callTree: '' } },
    );
    expect(t.sent()).toEqual([501, 502].map((id) => ({ type: 'CreateChannelRequest', channels: [{ id, name: `PV:${id}` }] })));
    expect(log).toEqual(['created 1', 'failed no such PV']);
    for (let cid = 3; cid <= 502; cid++) t.feed({ type: 'CreateChannelResponse', cid, sid: cid, status: OK });
    expect(t.sent()).toHaveLength(500);
    // A lost connection forgets the queue and hands back every channel but the refused one.
    expect(t.s.close({ kind: 'disconnected' })).toHaveLength(1199);
    expect(t.s.take()).toBeUndefined();
  });

  it('at most 64 INITs wait for their replies; each reply, failure or cancel lets the next go; a waiting INIT cancelled never goes out', () => {
    const t = ready();
    const req = { type: structure('', {}), value: {} };
    const fails: string[] = [];
    const h: OpHandler = { onFail: (r) => fails.push(r.kind), onInit: () => {} };
    const ids = Array.from({ length: 100 }, () => t.s.init(Cmd.MONITOR, 77, req, h, 4));
    const inits = (ms: Message[]) => ms.filter((m) => m.type === 'OpInitRequest').map((m) => (m as { requestId: number }).requestId);
    expect(inits(t.sent())).toEqual(ids.slice(0, 64));
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: ids[0]!, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.feed({
      type: 'OpInitResponse',
      command: Cmd.MONITOR,
      requestId: ids[1]!,
      subcommand: Sub.INIT,
      status: { type: 2, message: 'Monitor Create implied error', callTree: '' },
      valueType: null,
    });
    expect(inits(t.sent())).toEqual([ids[64], ids[65]]);
    t.s.destroy(ids[66]!); // still waiting: never sent, no DESTROY either
    t.s.destroy(ids[2]!); // in flight: its slot is free
    const after = t.sent();
    expect(inits(after)).toEqual([ids[67]]);
    expect(after.filter((m) => m.type === 'DestroyRequest')).toHaveLength(1);
    // A stray reply to a request already gone (pvxs writes an empty one after failing an INIT) is ignored.
    const stray = new Uint8Array([0xca, 2, 0x40, Cmd.MONITOR, 5, 0, 0, 0, ids[1]! & 255, (ids[1]! >> 8) & 255, 0, 0, 0]);
    const sh = emptyHeader();
    readHeader(stray, 0, sh);
    t.s.receive(sh, stray.subarray(8));
    expect(t.errors).toEqual([]);
  });

  it('creates go out in the order the channels were made, whatever order they came in, and wait while 256 INITs wait', () => {
    const t = ready();
    const log: string[] = [];
    // Channels found in another order than made (a search answered late): 3 comes after 7.
    for (const cid of [1, 2, 7, 3, 5]) t.s.createChannel(chan(cid, `PV:${cid}`, log));
    const creates = (ms: Message[]) =>
      ms.filter((m) => m.type === 'CreateChannelRequest').map((m) => (m as { channels: { id: number }[] }).channels[0]!.id);
    expect(creates(t.sent())).toEqual([1, 2, 3, 5, 7]);
    // 64 INITs in flight and 256 more waiting for a slot: the next creates wait too.
    const req = { type: structure('', {}), value: {} };
    const h: OpHandler = { onFail: () => {}, onInit: () => {} };
    const ids = Array.from({ length: 64 + 256 }, () => t.s.init(Cmd.GET, 77, req, h));
    t.sent();
    for (const cid of [9, 8]) t.s.createChannel(chan(cid, `PV:${cid}`, log));
    expect(creates(t.sent())).toEqual([]);
    // One INIT answered: one more goes out, and 255 wait: the creates go, in order.
    t.feed({ type: 'OpInitResponse', command: Cmd.GET, requestId: ids[0]!, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    expect(creates(t.sent())).toEqual([8, 9]);
    // The backlog full again; INITs cancelled while they wait let the creates go as well.
    const more = Array.from({ length: 1 }, () => t.s.init(Cmd.GET, 77, req, h));
    t.s.createChannel(chan(10, 'PV:10', log));
    expect(creates(t.sent())).toEqual([]);
    const asked = t.flushes();
    t.s.destroy(more[0]!);
    expect(t.flushes()).toBeGreaterThan(asked); // the connection is asked to write them
    expect(creates(t.sent())).toEqual([10]);
  });

  it('monitor STARTs wait while channels are being set up (creates or INITs waiting), then all go', () => {
    const t = ready();
    const req = { type: structure('', {}), value: {} };
    const h: OpHandler = { onFail: () => {}, onInit: () => {} };
    const starts = (ms: Message[]) =>
      ms.filter((m) => m.type === 'OpRequest' && m.subcommand === Sub.START).map((m) => (m as { requestId: number }).requestId);
    // One monitor alone starts at once.
    const one = t.s.init(Cmd.MONITOR, 77, req, h, 4);
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: one, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.s.monitorStart(one);
    expect(starts(t.sent())).toEqual([one]);
    // 100 at once: 64 INITs go out, 36 wait. The answered ones do not start while any waits.
    const ids = Array.from({ length: 100 }, () => t.s.init(Cmd.MONITOR, 77, req, h, 4));
    t.sent();
    const answer = (id: number) => {
      t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
      t.s.monitorStart(id);
    };
    for (const id of ids.slice(0, 35)) answer(id);
    expect(starts(t.sent())).toEqual([]);
    t.s.destroy(ids[10]!); // cancelled while held: its START never goes out
    // The 36th answer sends the last INIT that waited: the STARTs held go, and its own.
    answer(ids[35]!);
    expect(starts(t.sent())).toEqual(ids.slice(0, 36).filter((_, i) => i !== 10));
    // From then on each answered INIT starts at once.
    answer(ids[36]!);
    expect(starts(t.sent())).toEqual([ids[36]]);
    // STARTs held while INITs wait go when the waiting INITs are cancelled instead of answered.
    const waiting = Array.from({ length: 64 }, () => t.s.init(Cmd.GET, 77, req, h));
    t.sent();
    answer(ids[38]!); // in flight before: its START is held behind the ones waiting
    expect(starts(t.sent())).toEqual([]);
    for (const id of waiting.slice(2)) t.s.destroy(id); // the 62 still waiting
    expect(starts(t.sent())).toEqual([ids[38]]);
    // A channel create waiting (a window of creates full) holds STARTs too.
    const log: string[] = [];
    for (let cid = 1; cid <= 501; cid++) t.s.createChannel(chan(cid, `PV:${cid}`, log));
    t.sent();
    answer(ids[37]!);
    expect(starts(t.sent())).toEqual([]);
    t.feed({ type: 'CreateChannelResponse', cid: 1, sid: 1, status: OK });
    expect(t.sent().map((m) => m.type)).toEqual(['CreateChannelRequest']);
    t.feed({ type: 'CreateChannelResponse', cid: 2, sid: 2, status: OK });
    expect(starts(t.sent())).toEqual([ids[37]]);
  });

  it('INITs send their pvRequest type in full once per connection, then by its id', () => {
    const req = { type: structure('', { field: structure('', { value: structure('', {}) }) }), value: {} };
    const h: OpHandler = { onFail: () => {} };
    const inits = (t: ReturnType<typeof ready>): Message[] => {
      const types = new TypeCache(); // the server's cache for this connection
      const b = t.s.take()!;
      const out: Message[] = [];
      for (let pos = 0; pos < b.length; ) {
        const hd = emptyHeader();
        readHeader(b, pos, hd);
        expect(b[pos + 8 + 9]).toBe(out.length === 0 ? 0xfd : 0xfe); // after sid, request id and subcommand
        out.push(decodeMessage(hd, b.subarray(pos + 8, pos + 8 + hd.payloadSize), { types }) as Message);
        pos += 8 + hd.payloadSize;
      }
      return out;
    };
    const t = ready();
    t.s.init(Cmd.GET, 77, req, h);
    t.s.init(Cmd.GET, 78, req, h);
    t.s.init(Cmd.PUT, 79, req, h);
    const sent = inits(t);
    expect(sent).toHaveLength(3);
    for (const m of sent) expect(m).toMatchObject({ type: 'OpInitRequest', pvRequest: { type: req.type } });
    // A new connection knows none of them: the first INIT there carries the type again.
    const u = ready();
    u.s.init(Cmd.GET, 77, req, h);
    expect(inits(u)).toHaveLength(1);
  });

  it('monitor: each update is a new structure, the previous one unchanged; acks; the end', () => {
    const t = ready();
    const updates: Record<string, unknown>[] = [];
    const ends: unknown[] = [];
    const h: OpHandler = { onUpdate: (v) => updates.push(v), onFinish: (st) => ends.push(st), onFail: () => {} };
    const id = t.s.init(Cmd.MONITOR, 77, { type: structure('', {}), value: {} }, h, 4);
    expect(t.sent().at(-1)).toMatchObject({ type: 'OpInitRequest', subcommand: Sub.INIT | Sub.PIPELINE, queueSize: 4 });
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(0),
      valueType: TYPE,
      value: { value: 1, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 5 } },
    });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(1, 4),
      valueType: TYPE,
      value: { value: 2, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 9 } },
    });
    expect(updates[0]).toEqual({ value: 1, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 5 } });
    expect(updates[1]).toEqual({ value: 2, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 9 } });
    t.s.monitorAck(id, 2);
    expect(t.sent().at(-1)).toEqual({ type: 'MonitorAck', sid: 77, requestId: id, nfree: 2 });
    t.feed({ type: 'OpResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.DESTROY, status: OK });
    expect(ends).toHaveLength(1);
    expect(t.s.pendingOps).toBe(0);
  });

  it('monitor: a first update that marks some fields has defaults in the others; the next keeps them', () => {
    const t = ready();
    const updates: Record<string, unknown>[] = [];
    const id = t.s.init(Cmd.MONITOR, 77, { type: structure('', {}), value: {} }, { onUpdate: (v) => updates.push(v), onFail: () => {} }, 4);
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(4),
      valueType: TYPE,
      value: { value: 0, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 7 } },
    });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(1),
      valueType: TYPE,
      value: { value: 3, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0 } },
    });
    expect(updates[0]).toStrictEqual({ value: 0, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 7 } });
    expect(updates[1]).toStrictEqual({ value: 3, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 7 } });
    expect(t.errors).toEqual([]);
  });

  it('monitor: an update the handler got is never changed later; the structures a later update does not mark are shared', () => {
    const t = ready();
    const updates: Record<string, unknown>[] = [];
    const id = t.s.init(Cmd.MONITOR, 77, { type: structure('', {}), value: {} }, { onUpdate: (v) => updates.push(v), onFail: () => {} }, 4);
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(0),
      valueType: TYPE,
      value: { value: 1, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 5 } },
    });
    const first = structuredClone(updates[0]);
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(1),
      valueType: TYPE,
      value: { value: 2, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0 } },
    });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(1),
      valueType: TYPE,
      value: { value: 3, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0 } },
    });
    t.feed({
      type: 'MonitorUpdate',
      requestId: id,
      subcommand: 0,
      changed: BitSet.of(4),
      valueType: TYPE,
      value: { value: 0, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 8 } },
    });
    expect(updates[0]).toStrictEqual(first);
    expect(updates[1]).toStrictEqual({ value: 2, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 5 } });
    expect(updates[2]).toStrictEqual({ value: 3, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 5 } });
    expect(updates[2]!.timeStamp).toBe(updates[1]!.timeStamp); // not marked since: shared, not copied
    expect(updates[3]).toStrictEqual({ value: 3, timeStamp: { secondsPastEpoch: 10n, nanoseconds: 8 } });
    expect(updates[3]!.timeStamp).not.toBe(updates[2]!.timeStamp); // marked inside: a copy
    expect(updates[2]!.timeStamp).toStrictEqual({ secondsPastEpoch: 10n, nanoseconds: 5 });
  });

  it('PUT: the get-back reply is decoded like a GET reply (every field, defaults where none was sent); the completion has no value', () => {
    const t = ready();
    const got: unknown[] = [];
    const h: OpHandler = { onReply: (_st, v) => got.push(v), onFail: (r) => got.push(r) };
    const id = t.s.init(Cmd.PUT, 77, { type: structure('', {}), value: {} }, h);
    t.feed({ type: 'OpInitResponse', command: Cmd.PUT, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.s.putGet(id);
    expect(t.sent().at(-1)).toMatchObject({ type: 'OpRequest', command: Cmd.PUT, requestId: id, subcommand: Sub.GET });
    t.feed({
      type: 'DataResponse',
      command: Cmd.PUT,
      requestId: id,
      subcommand: Sub.GET,
      status: OK,
      changed: BitSet.of(1),
      valueType: TYPE,
      value: { value: 4.5 },
    });
    expect(got[0]).toStrictEqual({ value: 4.5, timeStamp: { secondsPastEpoch: 0n, nanoseconds: 0 } });
    t.s.put(id, BitSet.of(1), { value: 5 });
    t.feed({ type: 'OpResponse', command: Cmd.PUT, requestId: id, subcommand: Sub.EXEC, status: OK });
    expect(got[1]).toBeUndefined();
    expect(got).toHaveLength(2);
    expect(t.errors).toEqual([]);
  });

  it("a started monitor's cancel holds the next monitor INITs until the reply to an echo sent after it", () => {
    const t = ready();
    const req = { type: structure('', {}), value: {} };
    const h: OpHandler = { onFail: () => {} };
    const old = t.s.init(Cmd.MONITOR, 77, req, h, 4);
    t.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: old, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    t.s.monitorStart(old);
    t.sent();
    t.s.destroy(old);
    const next = t.s.init(Cmd.MONITOR, 77, req, h, 4);
    const dropped = t.s.init(Cmd.MONITOR, 78, req, h, 4);
    t.s.destroy(dropped); // never sent: nothing to destroy on the server
    t.s.init(Cmd.GET, 77, req, h); // a GET does not wait
    expect(t.sent().map((m) => m.type)).toEqual(['DestroyRequest', 'OpInitRequest', 'EchoRequest']);
    t.s.echo(); // the watchdog's echo, after the fence's: replies come in order
    expect(t.sent().map((m) => m.type)).toEqual(['EchoRequest']);
    t.feed({ type: 'EchoResponse', payload: new Uint8Array(0) });
    expect(t.sent()).toMatchObject([{ type: 'OpInitRequest', command: Cmd.MONITOR, requestId: next }]);
    t.feed({ type: 'EchoResponse', payload: new Uint8Array(0) });
    expect(t.sent()).toEqual([]);
    // A monitor cancelled before its INIT was answered never sent updates: no fence.
    const early = t.s.init(Cmd.MONITOR, 77, req, h, 4);
    t.sent();
    t.s.destroy(early);
    t.s.init(Cmd.MONITOR, 77, req, h, 4);
    expect(t.sent().map((m) => m.type)).toEqual(['DestroyRequest', 'OpInitRequest']);
  });

  it('close fails every request and hands back the channels; malformed data is a protocol error', () => {
    const t = ready();
    const log: string[] = [];
    t.s.createChannel(chan(1, 'X', log));
    const fails: unknown[] = [];
    t.s.init(Cmd.GET, 1, { type: structure('', {}), value: {} }, { onFail: (r) => fails.push(r) });
    expect(t.s.close({ kind: 'disconnected' }).map((c) => c.name)).toEqual(['X']);
    expect(fails).toEqual([{ kind: 'disconnected' }]);

    const u = ready();
    const id = u.s.init(Cmd.MONITOR, 77, { type: structure('', {}), value: {} }, { onFail: () => {} }, 4);
    u.feed({ type: 'OpInitResponse', command: Cmd.MONITOR, requestId: id, subcommand: Sub.INIT, status: OK, valueType: TYPE });
    const bytes = encodeMessages([
      { type: 'MonitorUpdate', requestId: id, subcommand: 0, changed: BitSet.of(0), valueType: TYPE, value: { value: 1 } },
    ]);
    const h = emptyHeader();
    readHeader(bytes, 0, h);
    u.s.receive({ ...h, payloadSize: h.payloadSize - 4 }, bytes.subarray(8, bytes.length - 4));
    expect(u.errors[0]).toMatch(/malformed monitor update/);
  });
});
