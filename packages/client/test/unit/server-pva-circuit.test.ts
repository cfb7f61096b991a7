// The server side of a PV Access connection without I/O: requests encoded with the client's own
// encoder, responses decoded with its decoder. A connection whose socket is behind keeps each
// monitor's latest update only (nothing encoded meanwhile), sent when the way opens.
import { describe, expect, it } from 'vitest';
import { buildPvRequest, Cmd, decodeMessage, emptyHeader, encodeMessages, readHeader, type Message } from '../../src/pva/index.js';
import { Framer } from '../../src/pva/framer.js';
import { PvaServerCircuit } from '../../src/server/pva/circuit.js';
import { ntTypeOf } from '../../src/server/pva/nt.js';
import { ServedPv } from '../../src/server/pv.js';
import { DbrType } from '../../src/ca/index.js';

function rig() {
  const pv = new ServedPv('A', { type: DbrType.DOUBLE, value: 0 });
  const c = new PvaServerCircuit({ findPva: (n) => (n === 'A' ? pv : undefined) }, { wantFlush() {} }, '127.0.0.1', {
    port: 5075,
    guid: new Uint8Array(12),
    address: new Uint8Array(16),
  });
  const feed = (m: Message) => {
    const bytes = encodeMessages([m]);
    const h = emptyHeader();
    readHeader(bytes, 0, h);
    expect(c.receive(h, bytes.subarray(8, 8 + h.payloadSize))).toBe(true);
  };
  const got: Message[] = [];
  const framer = new Framer(
    (h, p) => got.push(decodeMessage(h, p, { operation: () => ({ type: ntTypeOf(pv) }) }) as Message),
    () => {},
  );
  const drain = () => {
    got.length = 0;
    for (let b = c.take(); b; b = c.take()) for (const chunk of b) framer.push(chunk);
    return got.slice();
  };
  return { c, pv, feed, drain };
}

const values = (ms: Message[]) => ms.flatMap((m) => (m.type === 'MonitorUpdate' ? [(m.value as { value: number }).value] : []));

describe('PV Access server connection', () => {
  it('a socket that is behind: each monitor keeps its latest update, sent when the way opens', () => {
    const { c, pv, feed, drain } = rig();
    feed({ type: 'CreateChannelRequest', channels: [{ id: 1, name: 'A' }] });
    const sid = (drain().find((m) => m.type === 'CreateChannelResponse') as { sid: number }).sid;
    feed({ type: 'OpInitRequest', command: Cmd.MONITOR, sid, requestId: 9, subcommand: 0x08, pvRequest: buildPvRequest() });
    feed({ type: 'OpRequest', command: Cmd.MONITOR, sid, requestId: 9, subcommand: 0x44 });
    expect(values(drain())).toEqual([0]);
    c.setBlocked(true);
    for (let i = 1; i <= 1000; i++) pv.post(i);
    expect(drain()).toEqual([]);
    c.setBlocked(false);
    expect(values(drain())).toEqual([1000]);
    pv.post(2000);
    expect(values(drain())).toEqual([2000]);
  });

  it("a GET reads the metadata setMetadata gave last; a monitor's updates carry the new value only", () => {
    const { pv, feed, drain } = rig();
    feed({ type: 'CreateChannelRequest', channels: [{ id: 1, name: 'A' }] });
    const sid = (drain().find((m) => m.type === 'CreateChannelResponse') as { sid: number }).sid;
    const get = (requestId: number) => {
      feed({ type: 'OpInitRequest', command: Cmd.GET, sid, requestId, subcommand: 0x08, pvRequest: buildPvRequest() });
      drain();
      feed({ type: 'OpRequest', command: Cmd.GET, sid, requestId, subcommand: 0x40 });
      const r = drain().find((m) => m.type === 'DataResponse') as unknown as {
        value: { value: number; display: { units: string; limitHigh: number } };
      };
      return { value: r.value.value, units: r.value.display.units, high: r.value.display.limitHigh };
    };
    pv.setMetadata({ units: 'mm', upperDisplayLimit: 5 });
    expect(get(1)).toEqual({ value: 0, units: 'mm', high: 5 });
    pv.post(3);
    pv.setMetadata({ units: 'V' });
    expect(get(2)).toEqual({ value: 3, units: 'V', high: 5 });
    feed({ type: 'OpInitRequest', command: Cmd.MONITOR, sid, requestId: 9, subcommand: 0x08, pvRequest: buildPvRequest() });
    feed({ type: 'OpRequest', command: Cmd.MONITOR, sid, requestId: 9, subcommand: 0x44 });
    expect(values(drain())).toEqual([3]);
    pv.post(4);
    const [u] = drain() as { changed: { toArray(): number[] } }[];
    expect(u!.changed.toArray()).toEqual([1, 6]); // the value and timeStamp (the alarm is the same): no metadata again
  });
});
