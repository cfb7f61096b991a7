// The server side of a CA circuit without I/O: requests in, responses decoded with the client's
// own decoder. A consumer that stops reading holds one update per subscription; EVENTS_OFF holds
// them the same way; malformed writes are answered with a status, not a crash.
import { describe, expect, it } from 'vitest';
import {
  DBR_CLASS_NAME,
  DBR_PUT_ACKS,
  DBR_STSACK_STRING,
  DbrType,
  decodeDbr,
  decodeResponse,
  Eca,
  ECA_NORMAL,
  encodeDbr,
  type ResponseMessage,
} from '../../src/ca/index.js';
import { Framer } from '../../src/ca/framer.js';
import { CaServerCircuit } from '../../src/server/ca/circuit.js';
import { ServedPv } from '../../src/server/pv.js';

function rig() {
  const pvs = new Map<string, ServedPv>([['A', new ServedPv('A', { type: DbrType.DOUBLE, value: 0, valueDeadband: -1 })]]);
  const c = new CaServerCircuit({ find: (n) => pvs.get(n) }, { wantFlush() {} }, '127.0.0.1', { port: 5064 });
  const got: ResponseMessage[] = [];
  const framer = new Framer(
    (h, p) => {
      const m = decodeResponse(h, p);
      if (m.type !== 'Invalid') got.push(m);
    },
    () => {},
  );
  const drain = () => {
    got.length = 0;
    for (let b = c.take(); b; b = c.take()) framer.push(b);
    return got.slice();
  };
  c.receive({ type: 'CreateChanRequest', name: 'A', cid: 7, version: 13 });
  const created = drain();
  const sid = (created.find((m) => m.type === 'CreateChanResponse') as { sid: number }).sid;
  return { c, pv: pvs.get('A')!, sid, drain };
}

const values = (ms: ResponseMessage[]) =>
  ms.filter((m) => m.type === 'EventAddResponse').map((m) => decodeDbr(m.dataType, m.count, m.payload)!.value as number);

describe('CA server circuit', () => {
  it('a blocked socket or EVENTS_OFF: each subscription keeps its latest update, sent when the way opens', () => {
    const { c, pv, sid, drain } = rig();
    c.receive({ type: 'EventAddRequest', dataType: DbrType.DOUBLE, count: 1, sid, subscriptionId: 1, mask: 1 });
    expect(values(drain())).toEqual([0]);
    c.setBlocked(true);
    for (let i = 1; i <= 1000; i++) pv.post(i);
    expect(drain()).toEqual([]);
    c.setBlocked(false);
    expect(values(drain())).toEqual([1000]);
    c.receive({ type: 'EventsOffRequest' });
    for (let i = 1001; i <= 1010; i++) pv.post(i);
    expect(drain()).toEqual([]);
    c.receive({ type: 'EventsOnRequest' });
    expect(values(drain())).toEqual([1010]);
    pv.post(2000);
    expect(values(drain())).toEqual([2000]);
  });

  it('writes of the wrong shape get a status; the circuit goes on', () => {
    const { c, sid, drain } = rig();
    c.receive({ type: 'WriteNotifyRequest', dataType: 99, count: 1, sid, ioid: 3, payload: new Uint8Array(8) });
    c.receive({ type: 'WriteNotifyRequest', dataType: DbrType.DOUBLE, count: 4, sid, ioid: 4, payload: new Uint8Array(8) });
    c.receive({
      type: 'WriteNotifyRequest',
      dataType: DbrType.STRING,
      count: 1,
      sid,
      ioid: 5,
      payload: encodeDbr(DbrType.STRING, 'nope').payload,
    });
    c.receive({
      type: 'WriteNotifyRequest',
      dataType: DbrType.DOUBLE,
      count: 1,
      sid,
      ioid: 6,
      payload: encodeDbr(DbrType.DOUBLE, 5).payload,
    });
    const st = drain()
      .filter((m) => m.type === 'WriteNotifyResponse')
      .map((m) => [(m as { ioid: number }).ioid, (m as { status: number }).status]);
    expect(st).toEqual([
      [3, Eca.ECA_BADTYPE],
      [4, Eca.ECA_BADTYPE],
      [5, Eca.ECA_BADTYPE],
      [6, ECA_NORMAL],
    ]);
  });

  it('DBR_CLASS_NAME names a record type, DBR_STSACK_STRING has the alarm and the value as text, alarm acknowledgements are taken', () => {
    const { c, pv, sid, drain } = rig();
    pv.post(2.5, { severity: 1, status: 3 });
    drain();
    c.receive({ type: 'ReadNotifyRequest', dataType: DBR_CLASS_NAME, count: 1, sid, ioid: 1 });
    c.receive({ type: 'ReadNotifyRequest', dataType: DBR_STSACK_STRING, count: 1, sid, ioid: 2 });
    c.receive({
      type: 'WriteNotifyRequest',
      dataType: DBR_PUT_ACKS,
      count: 1,
      sid,
      ioid: 3,
      payload: new Uint8Array([0, 2, 0, 0, 0, 0, 0, 0]),
    });
    const out = drain();
    const reads = out.filter((m) => m.type === 'ReadNotifyResponse') as { payload: Uint8Array; status: number }[];
    const text = (b: Uint8Array) => new TextDecoder().decode(b.subarray(0, b.indexOf(0)));
    expect(text(reads[0]!.payload)).toBe('ao');
    const v = new DataView(reads[1]!.payload.buffer, reads[1]!.payload.byteOffset);
    expect([v.getInt16(0), v.getInt16(2), text(reads[1]!.payload.subarray(8))]).toEqual([3, 1, '2.5']);
    expect(out.find((m) => m.type === 'WriteNotifyResponse')).toMatchObject({ status: ECA_NORMAL });
  });
});
