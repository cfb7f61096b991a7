// Beacons: which CA beacons are anomalies (libca's rules), the CA listener registering with the
// repeater of the host and hearing beacons through it, the repeater process passing beacons on to
// every registered client; where the PVA listener binds, and the local forwarding of unicast
// beacons and searches among the PVA processes of a host.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { BeaconAnomalies } from '../../src/ca/beacon.js';
import { encode } from '../../src/ca/messages.js';
import { freePort } from 'epicsperf-testkit/ioc';
import { ipv4Mapped, ipv4Of, SearchFlags } from '../../src/pva/messages-session.js';
import { decodeMessage, encodeMessages } from '../../src/pva/messages.js';
import { forwardedForm, readDatagram } from '../../src/pva/forward.js';
import { CaBeacons } from '../../src/transport/ca/beacons.js';
import { beaconBindings, PvaBeacons, type Binding } from '../../src/transport/pva/beacons.js';
import type { PvaAddress } from '../../src/transport/addresses.js';
import type { SearchDestination } from '../../src/transport/config.js';
// @ts-expect-error: plain JavaScript, typed by its JSDoc only
import { runRepeater } from '../../bin/ca-repeater.mjs';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

async function socket(port = 0): Promise<dgram.Socket & { got: { msg: Buffer; port: number }[] }> {
  const s = dgram.createSocket('udp4') as dgram.Socket & { got: { msg: Buffer; port: number }[] };
  s.got = [];
  s.on('message', (msg, from) => s.got.push({ msg, port: from.port }));
  await new Promise<void>((res) => s.bind(port, '127.0.0.1', res));
  s.setBroadcast(true);
  cleanup.push(() => s.close());
  return s;
}

const caBeacon = (id: number, port = 5064, address = 0x7f000001): Uint8Array =>
  encode({ type: 'Beacon', version: 13, port, beaconId: id, address });

describe('CA beacon anomalies', () => {
  it('a new server, ids that start again, a long silence and a quicker period are anomalies; steady beacons are not', () => {
    const b = new BeaconAnomalies(15_000);
    expect(b.beacon('a:5064', 10, 0)).toBe(true); // never seen
    expect(b.beacon('a:5064', 11, 15_000)).toBe(false);
    expect(b.beacon('a:5064', 12, 30_000)).toBe(false);
    expect(b.beacon('a:5064', 12, 30_001)).toBe(false); // the same beacon twice
    expect(b.beacon('a:5064', 11, 30_002)).toBe(false); // a late copy
    expect(b.beacon('a:5064', 15, 75_000)).toBe(false); // beacons lost on the way: no verdict
    expect(b.beacon('a:5064', 16, 90_000)).toBe(false);
    expect(b.beacon('a:5064', 17, 140_000)).toBe(true); // silent for over 3.25 periods
    expect(b.beacon('b:5064', 0, 0)).toBe(true);
    expect(b.beacon('b:5064', 1, 15_000)).toBe(false);
    expect(b.beacon('b:5064', 2, 16_000)).toBe(true); // faster than before: restarted
    expect(b.beacon('c:5064', 500, 0)).toBe(true);
    expect(b.beacon('c:5064', 0, 3000)).toBe(true); // the count started again from 0
    // A server that lived a second (the client saw its id 4), restarted 6 s later: its new ids
    // are below the last but far too late for copies of it.
    expect(b.beacon('d:5064', 4, 0)).toBe(true);
    expect(b.beacon('d:5064', 0, 6000)).toBe(true);
    expect(b.beacon('d:5064', 1, 6020)).toBe(false);
    // The same for a server seen once, with id 0: its new id 0 is no copy 5 s later.
    expect(b.beacon('e:5064', 0, 0)).toBe(true);
    expect(b.beacon('e:5064', 0, 5000)).toBe(true);
    expect(b.beacon('e:5064', 0, 5010)).toBe(false);
  });
});

describe('CA beacons through the repeater', () => {
  it('registers with the repeater on its port, and searches again on an anomalous beacon only', async () => {
    const repeater = await socket(); // plays the repeater: the port is held, so none is started
    const anomalies: string[] = [];
    const b = new CaBeacons(repeater.address().port, 15_000, (s) => anomalies.push(s));
    cleanup.push(() => b.close());
    await sleep(150);
    expect(repeater.got.length).toBeGreaterThanOrEqual(1);
    expect(repeater.got[0]!.msg.readUInt16BE(0)).toBe(24); // REPEATER_REGISTER
    const client = repeater.got[0]!.port;
    repeater.send(encode({ type: 'RepeaterConfirmResponse', address: 0x7f000001 }), client, '127.0.0.1');
    repeater.send(caBeacon(10), client, '127.0.0.1');
    await sleep(50);
    repeater.send(caBeacon(11), client, '127.0.0.1');
    await sleep(50);
    expect(anomalies).toEqual(['127.0.0.1:5064']);
    repeater.send(caBeacon(0, 5064), client, '127.0.0.1'); // restarted
    repeater.send(caBeacon(0, 5070, 0), client, '127.0.0.1'); // another server, its address from the datagram
    await sleep(50);
    expect(anomalies).toEqual(['127.0.0.1:5064', '127.0.0.1:5064', '127.0.0.1:5070']);
    // Confirmed: it does not register again every 250 ms.
    const registers = repeater.got.length;
    await sleep(600);
    expect(repeater.got.length).toBe(registers);
  });

  it('the repeater passes each beacon on to every registered client, with the source address filled in', async () => {
    const port = await freePort({ tcp: false, udp: true });
    void runRepeater(port);
    await sleep(100);
    const [c1, c2, ioc] = [await socket(), await socket(), await socket()];
    for (const c of [c1, c2]) c.send(encode({ type: 'RepeaterRegisterRequest', address: 0 }), port, '127.0.0.1');
    await sleep(100);
    expect([c1, c2].map((c) => c.got[0]?.msg.readUInt16BE(0))).toEqual([17, 17]); // REPEATER_CONFIRM
    ioc.send(caBeacon(7, 5064, 0), port, '127.0.0.1');
    await sleep(100);
    for (const c of [c1, c2]) {
      const beacon = c.got.at(-1)!.msg;
      expect(beacon.readUInt16BE(0)).toBe(13);
      expect(beacon.readUInt32BE(8)).toBe(7);
      expect(beacon.readUInt32BE(12)).toBe(0x7f000001);
    }
    // A second repeater on the same port gives way at once.
    await expect(runRepeater(port)).resolves.toBe(false);
  });
});

describe('PVA beacons and local forwarding', () => {
  const beacon = (guid: number, changeCount: number, port: number): Uint8Array =>
    encodeMessages([
      {
        type: 'Beacon',
        guid: new Uint8Array(12).fill(guid),
        flags: 0,
        sequenceId: 0,
        changeCount,
        address: ipv4Mapped('0.0.0.0'),
        port,
        protocol: 'tcp',
        serverStatus: null,
      },
    ]);
  const search = (flags: number, replyPort: number): Uint8Array =>
    encodeMessages([
      {
        type: 'SearchRequest',
        sequenceId: 7,
        flags,
        responseAddress: ipv4Mapped('0.0.0.0'),
        responsePort: replyPort,
        protocols: ['tcp'],
        channels: [{ id: 1, name: 'A:B' }],
      },
    ]);
  const loOnly = { lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', internal: true }] };
  const ANY: PvaAddress[] = [
    { family: 4, host: '0.0.0.0', port: 0, multicast: false },
    { family: 6, host: '::', port: 0, multicast: false },
  ];

  it('listens on every address and broadcast address of the interfaces listed, the local group, and the multicast groups', () => {
    const ifaces = {
      lo: [
        { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', internal: true },
        { address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', family: 'IPv6', internal: true },
      ],
      eth0: [
        { address: '198.18.0.2', netmask: '255.255.255.0', family: 'IPv4', internal: false },
        { address: '2001:2::2', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', internal: false },
      ],
      eth1: [{ address: '198.18.1.2', netmask: '255.255.255.0', family: 'IPv4', internal: false }],
    };
    const hosts = (b: Binding[]) => b.map((x) => `${x.role} ${x.host}${x.join ? ` on ${x.join}` : ''}`);
    expect(hosts(beaconBindings(ANY, [], ifaces))).toEqual([
      'unicast 127.0.0.1',
      'unicast 198.18.0.2',
      'unicast 198.18.1.2',
      'broadcast 198.18.0.255',
      'broadcast 198.18.1.255',
      'local 224.0.0.128',
    ]);
    // One interface, an IPv6 address of it named, and groups of the search list.
    const groups: SearchDestination[] = [
      { host: '224.0.1.76', port: 5076, broadcast: false, family: 4, multicast: true, ttl: 1, iface: 'eth0' },
      { host: 'ff02::1:76', port: 5076, broadcast: false, family: 6, multicast: true, iface: 'eth0' },
      { host: '198.18.0.9', port: 5076, broadcast: false, family: 4, multicast: false },
    ];
    const one: PvaAddress[] = [
      { family: 4, host: '198.18.1.2', port: 0, multicast: false },
      { family: 6, host: '2001:2::2', port: 0, multicast: false },
    ];
    expect(hosts(beaconBindings(one, groups, ifaces))).toEqual([
      'unicast 198.18.1.2',
      'broadcast 198.18.1.255',
      'unicast 2001:2::2',
      'local 224.0.0.128',
      'group 224.0.1.76 on 198.18.0.2',
      'group ff02::1:76%eth0 on ::%eth0',
    ]);
  });

  it('the forwarded form: an ORIGIN_TAG naming the destination, the sender filled in, the unicast flag cleared', () => {
    const f = forwardedForm(search(SearchFlags.UNICAST, 40000), '198.18.0.2', '198.18.0.9')!;
    const d = readDatagram(f);
    expect(d).toMatchObject({ command: 0x03, offset: 24, origin: '198.18.0.2' });
    const m = decodeMessage(d.header, f.subarray(32)) as { type: string; flags: number; responseAddress: Uint8Array; responsePort: number };
    expect(m).toMatchObject({ type: 'SearchRequest', flags: 0, responsePort: 40000 });
    expect(ipv4Of(m.responseAddress)).toBe('198.18.0.9');
    const b = readDatagram(forwardedForm(beacon(1, 0, 5075), '198.18.0.2', '198.18.0.9')!);
    expect(b).toMatchObject({ command: 0x00, origin: '198.18.0.2' });
    // Never forwarded twice, nor anything but searches and beacons, nor a truncated message.
    expect(forwardedForm(f, '198.18.0.2', '198.18.0.9')).toBeUndefined();
    expect(forwardedForm(encodeMessages([{ type: 'EchoRequest', payload: new Uint8Array(4) }]), '1.2.3.4', '1.2.3.5')).toBeUndefined();
    expect(forwardedForm(search(0, 1).subarray(0, 20), '1.2.3.4', '1.2.3.5')).toBeUndefined();
  });

  it('a unicast beacon reaches every listener of the host, and a unicast search the host server, through the local group', async () => {
    const port = await freePort({ tcp: false, udp: true });
    // A PVA server of the host, as pvxs binds it: the wildcard address, in the local group.
    const server = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    await new Promise<void>((res) => server.bind(port, '0.0.0.0', res));
    server.addMembership('224.0.0.128', '127.0.0.1');
    cleanup.push(() => server.close());
    const atServer: Buffer[] = [];
    server.on('message', (m) => atServer.push(m));
    const seen: string[][] = [[], []];
    const listeners = seen.map((list) => new PvaBeacons(port, (s) => list.push(s), beaconBindings(ANY, [], loOnly)));
    cleanup.push(() => listeners.forEach((b) => b.close()));
    await sleep(50);
    const ioc = await socket();
    const send = (m: Uint8Array) => ioc.send(m, port, '127.0.0.1');
    send(beacon(1, 0, 5075));
    send(beacon(1, 0, 5075));
    await sleep(100);
    expect(seen).toEqual([['127.0.0.1:5075'], ['127.0.0.1:5075']]);
    send(beacon(2, 0, 5075)); // restarted: a new GUID
    send(beacon(2, 1, 5075)); // its channels changed
    await sleep(100);
    expect(seen.map((l) => l.length)).toEqual([3, 3]);
    expect(listeners[0]!.forwarded + listeners[1]!.forwarded).toBe(4);
    // A unicast search, taken by a listener (bound more specifically than the server), reaches
    // the server forwarded: tagged with its destination, the client's address to reply to.
    atServer.length = 0;
    send(search(SearchFlags.UNICAST, ioc.address().port));
    await sleep(100);
    const searches = atServer.map((m) => readDatagram(m)).filter((d) => d.command === 0x03);
    expect(searches).toHaveLength(1);
    expect(searches[0]!.origin).toBe('127.0.0.1');
  });
});
