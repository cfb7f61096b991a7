// The server side of one CA virtual circuit, without I/O: decoded requests in (the client's own
// codecs, src/ca/messages.ts), response bytes out, PVs from the server's provider. Channels,
// reads, subscriptions with their event masks and the EVENTS_OFF/ON flow control, writes handed
// to the PV's put handler with the outcome going back (WRITE_NOTIFY status), echo and clear.
import {
  CA_ACCESS_READ,
  CA_ACCESS_WRITE,
  CA_MINOR_PROTOCOL_REVISION,
  DBR_CLASS_NAME,
  DBR_PUT_ACKS,
  DBR_PUT_ACKT,
  DBR_STSACK_STRING,
  DbrType,
  Eca,
  ECA_NORMAL,
  MAX_STRING_SIZE,
} from '../../ca/constants.js';
import { dbrLayout, decodeDbr } from '../../ca/dbr.js';
import { encodeDbr, type EncodableValue } from '../../ca/dbr-encode.js';
import { encodeMessage, type RequestMessage, type ResponseMessage } from '../../ca/messages.js';
import { ByteWriter } from '../../wire/byte-writer.js';
import { EPICS_EPOCH_OFFSET } from '../../ca/constants.js';
import { type Caller, CHANGE_ACCESS, CHANGE_GONE, type ServedPv, type ServedValue } from '../pv.js';

/** CA access rights of a client to a PV, from the PV's access rule. */
function rightsOf(pv: ServedPv, peer: Caller): number {
  const a = pv.accessFor(peer);
  return (a === 'none' ? 0 : CA_ACCESS_READ) | (a === 'write' ? CA_ACCESS_WRITE : 0);
}

/** Finds the PV a client names (undefined: this server does not have it). */
export interface PvProvider {
  find(name: string): ServedPv | undefined;
}

export interface CircuitEvents {
  /** Bytes are waiting in take(). */
  wantFlush(): void;
}

export interface CircuitOptions {
  /** The TCP port searches over this circuit are answered with (name-server clients). */
  port: number;
  /** Largest DBR payload sent, bytes (EPICS_CA_MAX_ARRAY_BYTES; default 16384). */
  maxArrayBytes?: number;
}

interface Channel {
  cid: number;
  sid: number;
  pv: ServedPv;
  subs: Map<number, Subscription>;
  /** The access rights the client was last told. */
  rights: number;
  /** Stops the channel's own listener (access rights, the PV retired). */
  unlisten: () => void;
}

interface Subscription {
  id: number;
  dataType: number;
  count: number;
  mask: number;
  unsubscribe: () => void;
}

export class CaServerCircuit {
  private readonly out = new ByteWriter();
  private readonly channels = new Map<number, Channel>();
  private nextSid = 1;
  /** EVENTS_OFF: subscription updates wait (the latest of each), sent at EVENTS_ON. */
  private eventsOff = false;
  /** The socket does not take more now: updates wait as under EVENTS_OFF. */
  private blocked = false;
  private readonly maxArrayBytes: number;
  private readonly held = new Map<Subscription, Channel>();
  private closed = false;
  readonly peer: Caller;

  constructor(
    private readonly provider: PvProvider,
    private readonly events: CircuitEvents,
    address: string,
    private readonly opts: CircuitOptions = { port: 0 },
  ) {
    this.peer = { address, host: address, user: '' };
    this.maxArrayBytes = opts.maxArrayBytes ?? 16384;
  }

  /**
   * The socket's unsent bytes passed the limit (true) or drained (false): meanwhile each
   * subscription keeps only its latest update, so a client that stops reading holds one update per
   * subscription here, and the others' circuits are not affected.
   */
  setBlocked(on: boolean): void {
    if (this.blocked === on) return;
    this.blocked = on;
    if (!on && !this.eventsOff) this.release();
  }

  private release(): void {
    const held = [...this.held];
    this.held.clear();
    for (const [sub, ch] of held) this.update(ch, sub);
  }

  /** Response bytes to write, or undefined. */
  take(): Uint8Array | undefined {
    return this.out.length ? this.out.take() : undefined;
  }

  /** One request from the client. */
  receive(m: RequestMessage): void {
    if (this.closed) return;
    switch (m.type) {
      case 'VersionRequest':
        return this.send({ type: 'VersionResponse', version: CA_MINOR_PROTOCOL_REVISION, priority: 0, sequence: 0 });
      case 'ClientNameRequest':
        this.peer.user = m.name;
        return this.recheckAccess();
      case 'HostNameRequest':
        this.peer.host = m.name;
        return this.recheckAccess();
      case 'CreateChanRequest':
        return this.create(m.name, m.cid);
      case 'ReadNotifyRequest': {
        const ch = this.channels.get(m.sid);
        if (!ch) return;
        const r = ch.rights & CA_ACCESS_READ ? this.encode(ch.pv, m.dataType, m.count) : { status: Eca.ECA_NORDACCESS! };
        if ('status' in r)
          return this.send({
            type: 'ReadNotifyResponse',
            dataType: m.dataType,
            count: 0,
            status: r.status,
            ioid: m.ioid,
            payload: new Uint8Array(0),
          });
        return this.send({
          type: 'ReadNotifyResponse',
          dataType: m.dataType,
          count: r.count,
          status: ECA_NORMAL,
          ioid: m.ioid,
          payload: r.payload,
        });
      }
      case 'EventAddRequest':
        return this.subscribe(m.sid, m.subscriptionId, m.dataType, m.count, m.mask);
      case 'EventCancelRequest': {
        const ch = this.channels.get(m.sid);
        const sub = ch?.subs.get(m.subscriptionId);
        if (!ch || !sub) return;
        this.cancel(ch, sub);
        return this.send({
          type: 'EventAddResponse',
          dataType: m.dataType,
          count: 0,
          status: ECA_NORMAL,
          subscriptionId: m.subscriptionId,
          payload: new Uint8Array(0),
        });
      }
      case 'WriteRequest':
      case 'WriteNotifyRequest':
        return this.write(m.sid, m.dataType, m.count, m.payload, m.type === 'WriteNotifyRequest' ? m.ioid : undefined);
      case 'ClearChannelRequest': {
        const ch = this.channels.get(m.sid);
        if (ch) this.drop(ch);
        return this.send({ type: 'ClearChannelResponse', sid: m.sid, cid: m.cid });
      }
      case 'EchoRequest':
        return this.send({ type: 'EchoResponse' });
      case 'EventsOffRequest':
        this.eventsOff = true;
        return;
      case 'EventsOnRequest':
        this.eventsOff = false;
        if (!this.blocked) this.release();
        return;
      case 'SearchRequest':
        // Over TCP (a client using this server as a name server): answered only for names it has.
        if (this.provider.find(m.name))
          this.send({ type: 'SearchResponse', port: this.opts.port, address: 0xffffffff, cid: m.cid, version: CA_MINOR_PROTOCOL_REVISION });
        return;
      default:
        return;
    }
  }

  /** The circuit ended: every subscription goes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels.values()) this.drop(ch);
  }

  get channelCount(): number {
    return this.channels.size;
  }

  private send(m: ResponseMessage): void {
    const empty = this.out.length === 0;
    encodeMessage(this.out, m);
    if (empty) this.events.wantFlush();
  }

  private create(name: string, cid: number): void {
    const pv = this.provider.find(name);
    if (!pv) return this.send({ type: 'CreateChFailResponse', cid });
    const sid = this.nextSid++;
    const ch: Channel = { cid, sid, pv, subs: new Map(), rights: rightsOf(pv, this.peer), unlisten: () => {} };
    ch.unlisten = pv.subscribe((_pv, changes) => {
      if (changes & CHANGE_ACCESS) this.recheck(ch);
      if (changes & CHANGE_GONE) {
        this.drop(ch);
        this.send({ type: 'ServerDisconnResponse', cid });
      }
    });
    this.channels.set(sid, ch);
    this.send({ type: 'AccessRightsResponse', cid, rights: ch.rights });
    this.send({ type: 'CreateChanResponse', dataType: pv.type, count: pv.maxCount, cid, sid });
  }

  /** The client named itself again: its rights on every channel, asked again. */
  private recheckAccess(): void {
    for (const ch of this.channels.values()) this.recheck(ch);
  }

  /** Tell the client its rights on a channel when they changed. */
  private recheck(ch: Channel): void {
    const rights = rightsOf(ch.pv, this.peer);
    if (rights === ch.rights) return;
    ch.rights = rights;
    this.send({ type: 'AccessRightsResponse', cid: ch.cid, rights });
  }

  private subscribe(sid: number, id: number, dataType: number, count: number, mask: number): void {
    const ch = this.channels.get(sid);
    if (!ch) return;
    const old = ch.subs.get(id);
    if (old) this.cancel(ch, old);
    const sub: Subscription = { id, dataType, count, mask, unsubscribe: () => {} };
    sub.unsubscribe = ch.pv.subscribe((_pv, changes) => {
      // Without read access the subscription's first answer said so; nothing more until it is back.
      if ((changes & sub.mask & 0xff) === 0 || !(ch.rights & CA_ACCESS_READ)) return;
      if (this.eventsOff || this.blocked) this.held.set(sub, ch);
      else this.update(ch, sub);
    });
    ch.subs.set(id, sub);
    this.update(ch, sub); // the current value first
  }

  private update(ch: Channel, sub: Subscription): void {
    const r = ch.rights & CA_ACCESS_READ ? this.encode(ch.pv, sub.dataType, sub.count) : { status: Eca.ECA_NORDACCESS! };
    if ('status' in r)
      return this.send({
        type: 'EventAddResponse',
        dataType: sub.dataType,
        count: 0,
        status: r.status,
        subscriptionId: sub.id,
        payload: new Uint8Array(0),
      });
    this.send({
      type: 'EventAddResponse',
      dataType: sub.dataType,
      count: r.count,
      status: ECA_NORMAL,
      subscriptionId: sub.id,
      payload: r.payload,
    });
  }

  private cancel(ch: Channel, sub: Subscription): void {
    sub.unsubscribe();
    ch.subs.delete(sub.id);
    this.held.delete(sub);
  }

  private drop(ch: Channel): void {
    for (const sub of [...ch.subs.values()]) this.cancel(ch, sub);
    ch.unlisten();
    this.channels.delete(ch.sid);
  }

  /** The PV's value as DBR `dataType` of `count` elements (0: as many as it holds), or an ECA status. */
  private encode(pv: ServedPv, dataType: number, count: number): { payload: Uint8Array; count: number } | { status: number } {
    if (dataType === DBR_CLASS_NAME || dataType === DBR_STSACK_STRING) return encodeSpecial(pv, dataType);
    const l = dbrLayout(dataType);
    if (!l) return { status: Eca.ECA_BADTYPE! };
    const s = pv.state;
    const n = count === 0 ? pv.count : count;
    if (n > pv.maxCount) return { status: Eca.ECA_BADCOUNT! };
    let value: EncodableValue;
    try {
      value = convert(s.value, pv, l.native, n);
    } catch {
      return { status: Eca.ECA_BADTYPE! };
    }
    if (l.valueOffset + n * l.elementSize > this.maxArrayBytes) return { status: Eca.ECA_TOLARGE! };
    const { payload, count: c } = encodeDbr(dataType, value, {
      status: s.status,
      severity: s.severity,
      secondsPastEpoch: Math.max(0, s.secondsPastEpoch - EPICS_EPOCH_OFFSET),
      nanoseconds: s.nanoseconds,
      metadata: pv.metadata,
    });
    return { payload, count: c };
  }

  private write(sid: number, dataType: number, count: number, payload: Uint8Array, ioid: number | undefined): void {
    const ch = this.channels.get(sid);
    if (!ch) return;
    const answer = (status: number) => {
      if (ioid !== undefined && !this.closed && this.channels.has(sid))
        this.send({ type: 'WriteNotifyResponse', dataType, count, status, ioid });
    };
    if (!(ch.rights & CA_ACCESS_WRITE)) return answer(Eca.ECA_NOWTACCESS!);
    // Alarm acknowledgement (an alarm handler's): this server keeps no unacknowledged alarms.
    if (dataType === DBR_PUT_ACKT || dataType === DBR_PUT_ACKS) return answer(payload.length >= 2 ? ECA_NORMAL : Eca.ECA_BADTYPE!);
    const r = decodeDbr(dataType, count, padStrings(dataType, count, payload));
    if (!r) return answer(Eca.ECA_BADTYPE!);
    let value: ServedValue;
    try {
      value = fromWire(r.value, ch.pv);
    } catch {
      return answer(Eca.ECA_BADTYPE!);
    }
    const pv = ch.pv;
    const handler = pv.onPut;
    if (!handler) {
      pv.post(value);
      return answer(ECA_NORMAL);
    }
    Promise.resolve()
      .then(() => handler({ value, peer: { ...this.peer } }))
      .then(
        (outcome) => {
          if (outcome && !outcome.accept) return answer(Eca.ECA_PUTFAIL!);
          pv.post(outcome?.value ?? value);
          answer(ECA_NORMAL);
        },
        () => answer(Eca.ECA_PUTFAIL!),
      );
  }
}

/**
 * DBR_CLASS_NAME (the record type a PV stands for, as RSRV answers: "ao", "stringout", ...) and
 * DBR_STSACK_STRING (status, severity, the acknowledgement fields, the value as a string).
 */
function encodeSpecial(pv: ServedPv, dataType: number): { payload: Uint8Array; count: number } {
  if (dataType === DBR_CLASS_NAME) {
    const payload = new Uint8Array(MAX_STRING_SIZE);
    payload.set(new TextEncoder().encode(pv.className).subarray(0, MAX_STRING_SIZE - 1));
    return { payload, count: 1 };
  }
  const s = pv.state;
  const payload = new Uint8Array(8 + MAX_STRING_SIZE);
  const view = new DataView(payload.buffer);
  view.setInt16(0, s.status);
  view.setInt16(2, s.severity);
  // ackt (acknowledge transients) 1, acks (the highest unacknowledged severity) 0: nothing to acknowledge.
  view.setUint16(4, 1);
  view.setUint16(6, 0);
  const text = convert(s.value, pv, DbrType.STRING, 1) as string[];
  payload.set(new TextEncoder().encode(text[0] ?? '').subarray(0, MAX_STRING_SIZE - 1), 8);
  return { payload, count: 1 };
}

/** A write of strings as libca sends it, cut after the last string's NUL: padded to whole strings. */
function padStrings(dataType: number, count: number, payload: Uint8Array): Uint8Array {
  const l = dbrLayout(dataType);
  if (!l || l.native !== DbrType.STRING) return payload;
  const size = l.valueOffset + count * MAX_STRING_SIZE;
  if (payload.length >= size) return payload;
  const full = new Uint8Array(size);
  full.set(payload);
  return full;
}

/** The PV's value in the native type a client asked for, `n` elements. */
function convert(v: ServedValue, pv: ServedPv, native: number, n: number): EncodableValue {
  // Numbers of a typed array (not 64-bit integers) as they are, zeros past their end, not copied
  // element by element into a JavaScript array (docs/results.md, Servers: the crossing time).
  if (native !== DbrType.STRING && ArrayBuffer.isView(v) && !(v instanceof BigInt64Array)) {
    const t = v as Float64Array;
    if (t.length === n) return t;
    if (t.length > n) return t.subarray(0, n);
    const out = new (t.constructor as Float64ArrayConstructor)(n);
    out.set(t);
    return out;
  }
  const choices = pv.metadata.enumStrings;
  const list: readonly (number | string)[] =
    typeof v === 'number' || typeof v === 'string' ? [v] : Array.from(v as ArrayLike<number | string>);
  const out: (number | string)[] = [];
  for (let i = 0; i < n; i++) {
    const x = i < list.length ? list[i]! : native === DbrType.STRING ? '' : 0;
    if (native === DbrType.STRING)
      out.push(typeof x === 'string' ? x : pv.type === DbrType.ENUM && choices?.[x] !== undefined ? choices[x]! : String(x));
    else if (typeof x === 'number') out.push(x);
    else {
      const k = pv.type === DbrType.ENUM && choices ? choices.indexOf(x) : -1;
      const num = k >= 0 ? k : Number(x);
      if (x.trim() === '' || Number.isNaN(num)) throw new TypeError(`"${x}" is not a number`);
      out.push(num);
    }
  }
  if (native === DbrType.STRING) return out as string[];
  return n === 1 && typeof v !== 'object' ? (out[0] as number) : (out as number[]);
}

/** A written value in the PV's own type. */
function fromWire(v: unknown, pv: ServedPv): ServedValue {
  // Numbers in a typed array (a view of the message): copied as they are.
  if (ArrayBuffer.isView(v) && pv.type !== DbrType.STRING && pv.type !== DbrType.ENUM && pv.maxCount > 1)
    return (v as Float64Array).slice();
  const list: unknown[] = typeof v === 'number' || typeof v === 'string' ? [v] : Array.from(v as ArrayLike<unknown>);
  const choices = pv.metadata.enumStrings;
  const conv = list.map((x) => {
    if (pv.type === DbrType.STRING) return String(x);
    if (typeof x === 'number') return x;
    const s = String(x);
    const k = pv.type === DbrType.ENUM && choices ? choices.indexOf(s) : -1;
    const num = k >= 0 ? k : Number(s);
    if (s.trim() === '' || Number.isNaN(num)) throw new TypeError(`"${s}" is not a number`);
    return num;
  });
  if (pv.maxCount === 1) return conv[0] as ServedValue;
  return conv as ServedValue;
}
