// A fake PV Access server on 127.0.0.1 for the hostile-server tests (a real server cannot send
// these): it validates connections, answers searches over TCP and creates channels, then
// answers a GET according to the channel's name: normally, after an unknown command, with a
// truncated payload, with an absurd payload size, with a reference to a type id never defined,
// cut off half-way (then it closes), or not at all (then it stops answering echoes too); names
// ending in ":elsewhere" are found on another port. A PUT to a 'good' channel succeeds;
// `requests` counts the GET and PUT INITs, executions and DESTROY_REQUESTs; `monitorInits` keeps
// what each MONITOR INIT asked for. A MONITOR INIT is answered with a double, or for names ending
// in ":array" an array of doubles, and sends no update; for names ending in ":updates", an array
// of doubles with an alarm severity and a second array, and its START is answered with UPDATES
// (large arrays, each update changing some of the fields).
import net from 'node:net';
import {
  BitSet,
  Cmd,
  decodeMessage,
  encodeMessages,
  HEADER_SIZE,
  OK,
  scalar,
  scalarArray,
  structure,
  TypeCache,
  Writer,
  type Message,
  type StructureDesc,
} from '../../src/pva/index.js';
import { Framer } from '../../src/pva/framer.js';
import { startMessage } from '../../src/pva/header.js';
import { monitorOptions } from '../../src/pva/pvrequest.js';

export type Mode = 'good' | 'unknown' | 'truncated' | 'oversized' | 'badref' | 'cutoff' | 'silent';
export const MODES: Mode[] = ['good', 'unknown', 'truncated', 'oversized', 'badref', 'cutoff', 'silent'];

const TYPE: StructureDesc = structure('epics:nt/NTScalar:1.0', { value: scalar('double') });
const ARRAY_TYPE: StructureDesc = structure('epics:nt/NTScalarArray:1.0', { value: scalarArray('double') });
/** The type of a ":updates" monitor: bit 1 is the value, 2 the alarm, 3 its severity, 4 a second array. */
const UPDATES_TYPE: StructureDesc = structure('epics:nt/NTScalarArray:1.0', {
  value: scalarArray('double'),
  alarm: structure('alarm_t', { severity: scalar('int') }),
  other: scalarArray('double'),
});
/** Elements of each ":updates" array (1.6 MB: large enough for a buffer of its own, and to be pooled). */
export const UPDATES_ELEMENTS = 200_000;
/**
 * The updates a ":updates" monitor gets on START, with the changed bits: the value v in every
 * element of the value, o in every element of the other array, the update's index as the severity.
 */
export const UPDATES: { v: number; o: number; bits: number[] }[] = [
  { v: 1, o: 1, bits: [0] },
  { v: 2, o: 1, bits: [1, 3] },
  { v: 2, o: 2, bits: [4] },
  { v: 2, o: 2, bits: [3] },
  { v: 3, o: 3, bits: [1, 4] },
  { v: 4, o: 3, bits: [1] },
  { v: 4, o: 3, bits: [2] },
  { v: 5, o: 5, bits: [0] },
  { v: 6, o: 5, bits: [1, 3] },
  { v: 7, o: 5, bits: [1] },
];

export class FakePvaServer {
  private readonly server = net.createServer((s) => this.serve(s));
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Names ending in ":elsewhere" are found on this port of 127.0.0.1 (another server). */
  elsewhere: number | undefined;
  /** PUT requests seen, on every connection. */
  readonly requests = { get: { inits: 0, executions: 0, destroys: 0 }, put: { inits: 0, executions: 0, destroys: 0 } };
  /** MONITOR INITs seen: the pvRequest's queue size and pipelining, and the INIT's window (nack). */
  readonly monitorInits: { name: string; queueSize?: number; pipeline: boolean; window?: number }[] = [];

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private serve(sock: net.Socket): void {
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => {});
    const names = new Map<number, string>(); // sid -> name
    const ops = new Map<number, string>(); // request id -> channel name
    const live = new Map<number, 'get' | 'put'>(); // GET and PUT requests the server holds
    const monitors = new Set<number>(); // ":updates" monitors, by request id
    const types = new TypeCache(); // the client's types on this connection (its INITs refer to them by id)
    let silent = false;
    const send = (...m: Message[]): void => {
      if (!sock.destroyed) sock.write(encodeMessages(m));
    };
    const framer = new Framer(
      (h, payload) => {
        if (silent) return;
        const m = decodeMessage(h, payload, { types });
        switch (m.type) {
          case 'ConnectionValidationResponse':
            return send({ type: 'ConnectionValidated', status: OK });
          case 'SearchRequest': {
            const answer = (port: number, ids: number[]): void =>
              send({
                type: 'SearchResponse',
                guid: new Uint8Array(12),
                sequenceId: m.sequenceId,
                address: new Uint8Array(16),
                port,
                protocol: 'tcp',
                found: true,
                ids,
              });
            const away = (c: { name: string }): boolean => c.name.endsWith(':elsewhere') && this.elsewhere !== undefined;
            const here = m.channels.filter((c) => !away(c)).map((c) => c.id);
            const there = m.channels.filter(away).map((c) => c.id);
            if (here.length) answer(this.port, here);
            if (there.length) answer(this.elsewhere!, there);
            return;
          }
          case 'CreateChannelRequest':
            for (const c of m.channels) {
              const sid = 100 + c.id;
              names.set(sid, c.name);
              send({ type: 'CreateChannelResponse', cid: c.id, sid, status: OK });
            }
            return;
          case 'OpInitRequest': {
            const mode = (names.get(m.sid) ?? '').split(':')[1] as Mode;
            ops.set(m.requestId, mode);
            const kind = m.command === Cmd.PUT ? 'put' : m.command === Cmd.GET ? 'get' : undefined;
            if (kind) {
              this.requests[kind].inits++;
              live.set(m.requestId, kind);
            }
            if (m.command === Cmd.MONITOR) {
              const name = names.get(m.sid) ?? '';
              this.monitorInits.push({ name, ...(m.pvRequest ? monitorOptions(m.pvRequest) : { pipeline: false }), window: m.queueSize });
              if (name.endsWith(':updates')) monitors.add(m.requestId);
              const valueType = name.endsWith(':array') ? ARRAY_TYPE : name.endsWith(':updates') ? UPDATES_TYPE : TYPE;
              return send({
                type: 'OpInitResponse',
                command: Cmd.MONITOR,
                requestId: m.requestId,
                subcommand: 0x08,
                status: OK,
                valueType,
              });
            }
            if (m.command === Cmd.PUT) {
              const init = { type: 'OpInitResponse', command: Cmd.PUT, requestId: m.requestId, subcommand: 0x08 } as const;
              return send({ ...init, status: OK, valueType: TYPE });
            }
            return this.init(sock, mode, m.requestId, () => (silent = true));
          }
          case 'OpRequest':
            if (m.command === Cmd.MONITOR && m.subcommand === 0x44 && monitors.delete(m.requestId)) {
              send(
                ...UPDATES.map(({ v, o, bits }, i): Message => {
                  const value = {
                    value: new Float64Array(UPDATES_ELEMENTS).fill(v),
                    alarm: { severity: i },
                    other: new Float64Array(UPDATES_ELEMENTS).fill(o),
                  };
                  return {
                    type: 'MonitorUpdate',
                    requestId: m.requestId,
                    subcommand: 0,
                    changed: new BitSet(bits),
                    valueType: UPDATES_TYPE,
                    value,
                  };
                }),
              );
              return;
            }
            if (m.command === Cmd.GET) {
              this.requests.get.executions++;
              if (m.subcommand & 0x10) live.delete(m.requestId); // DESTROY: the request ends with its reply
              const v = { value: 42.5 };
              send({
                type: 'DataResponse',
                command: Cmd.GET,
                requestId: m.requestId,
                subcommand: 0,
                status: OK,
                changed: BitSet.of(0),
                valueType: TYPE,
                value: v,
              });
            }
            return;
          case 'PutRequest':
            this.requests.put.executions++;
            return send({ type: 'OpResponse', command: Cmd.PUT, requestId: m.requestId, subcommand: 0, status: OK });
          case 'DestroyRequest':
            {
              const kind = live.get(m.requestId);
              if (kind && live.delete(m.requestId)) this.requests[kind].destroys++;
            }
            return;
          case 'EchoRequest':
            return send({ type: 'EchoResponse', payload: m.payload });
        }
      },
      () => sock.destroy(),
    );
    sock.on('data', (d) => framer.push(d));
    sock.write(
      encodeMessages([
        { type: 'SetByteOrder', bigEndian: false },
        { type: 'ConnectionValidationRequest', bufferSize: 0x10000, registrySize: 0x7fff, authMethods: ['anonymous'] },
      ]),
    );
  }

  /** The GET INIT reply of each mode. */
  private init(sock: net.Socket, mode: Mode, requestId: number, goSilent: () => void): void {
    const reply = encodeMessages([{ type: 'OpInitResponse', command: Cmd.GET, requestId, subcommand: 0x08, status: OK, valueType: TYPE }]);
    switch (mode) {
      case 'unknown': {
        // A message of a command no PVA version defines, with a payload, before the real reply.
        const w = new Writer(true);
        const off = startMessage(w, 0x7e, 0x40, 4);
        void off;
        w.u32(0xdeadbeef);
        sock.write(w.take());
        sock.write(reply);
        return;
      }
      case 'truncated': {
        // A whole message whose payload ends inside the type description.
        const cut = reply.slice(0, reply.length - 6);
        new DataView(cut.buffer).setUint32(4, cut.length - HEADER_SIZE, true);
        sock.write(cut);
        return;
      }
      case 'oversized': {
        const h = reply.slice(0, HEADER_SIZE);
        new DataView(h.buffer).setUint32(4, 0x7fffffff, true);
        sock.write(h);
        return;
      }
      case 'badref': {
        // The type given as "the cached type 77" (0xFE + id), which this connection never defined.
        const w = new Writer(true);
        const off = startMessage(w, Cmd.GET, 0x40);
        w.i32(requestId);
        w.u8(0x08);
        w.u8(0xff);
        w.u8(0xfe);
        w.u16(77);
        w.dataView.setUint32(off + 4, w.length - off - HEADER_SIZE, true);
        sock.write(w.take());
        return;
      }
      case 'cutoff':
        sock.write(reply.slice(0, 20));
        setTimeout(() => sock.destroy(), 20);
        return;
      case 'silent':
        goSilent();
        return;
      default:
        sock.write(reply);
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
