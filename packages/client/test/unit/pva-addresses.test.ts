// PV Access address lists in pvxs's syntax: every form of an entry, the bad ones, the search
// destinations they make (broadcast, multicast, IPv6, PVXS_ENABLE_IPV6, interfaces), name servers,
// and the 16-byte address field of a search reply.
import { describe, expect, it } from 'vitest';
import { addressOf, ipv4Mapped } from '../../src/pva/messages-session.js';
import {
  formatPvaAddress,
  hostPort,
  isMulticast,
  multicastInterface,
  parsePvaAddress,
  parsePvaAddressList,
} from '../../src/transport/addresses.js';
import type { Ifaces } from '../../src/transport/config.js';
import { pvaSearchDestinations, resolvePvaConfig } from '../../src/transport/pva/config.js';

const IFACES: Ifaces = {
  lo: [
    { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', internal: true },
    { address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', family: 'IPv6', internal: true },
  ],
  eth0: [
    { address: '198.18.0.2', netmask: '255.255.255.0', family: 'IPv4', internal: false },
    { address: '2001:2::2', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', internal: false },
  ],
  eth1: [{ address: '198.19.5.2', netmask: '255.255.0.0', family: 'IPv4', internal: false }],
};

describe('parsePvaAddress', () => {
  it.each([
    ['myhost', { family: 4, host: 'myhost', port: 5076, multicast: false }],
    ['myhost:5099', { family: 4, host: 'myhost', port: 5099, multicast: false }],
    ['localhost', { family: 4, host: '127.0.0.1', port: 5076, multicast: false }],
    ['localhost:6000', { family: 4, host: '127.0.0.1', port: 6000, multicast: false }],
    ['198.18.0.1', { family: 4, host: '198.18.0.1', port: 5076, multicast: false }],
    ['198.18.0.1:0', { family: 4, host: '198.18.0.1', port: 5076, multicast: false }],
    ['1.2.3.4:5076,3@eth0', { family: 4, host: '1.2.3.4', port: 5076, multicast: false }],
    ['224.0.1.7:5076,3@eth0', { family: 4, host: '224.0.1.7', port: 5076, multicast: true, ttl: 3, iface: 'eth0' }],
    ['239.1.2.3,1@198.18.0.2', { family: 4, host: '239.1.2.3', port: 5076, multicast: true, ttl: 1, iface: '198.18.0.2' }],
    ['239.1.2.3@eth1', { family: 4, host: '239.1.2.3', port: 5076, multicast: true, iface: 'eth1' }],
    ['239.1.2.3:6000,16', { family: 4, host: '239.1.2.3', port: 6000, multicast: true, ttl: 16 }],
    ['[2001:2::1]', { family: 6, host: '2001:2::1', port: 5076, multicast: false }],
    ['[2001:2::1]:5099', { family: 6, host: '2001:2::1', port: 5099, multicast: false }],
    ['2001:2::1', { family: 6, host: '2001:2::1', port: 5076, multicast: false }],
    ['::1', { family: 6, host: '::1', port: 5076, multicast: false }],
    ['[::ffff:198.18.0.1]:7', { family: 6, host: '::ffff:198.18.0.1', port: 7, multicast: false }],
    ['[ff02::1:1]:5076,1@eth0', { family: 6, host: 'ff02::1:1', port: 5076, multicast: true, ttl: 1, iface: 'eth0' }],
    ['[ff02::1:1%eth0]', { family: 6, host: 'ff02::1:1', port: 5076, multicast: true, iface: 'eth0' }],
    ['[fe80::1%eth0]:5076', { family: 6, host: 'fe80::1%eth0', port: 5076, multicast: false }],
  ])('%s', (entry, want) => {
    expect(parsePvaAddress(entry, 5076)).toEqual(want);
  });

  it.each([
    ['[2001:2::1', /unmatched bracket/],
    ['2001:2::1]', /unmatched bracket/],
    ['[2001:2::1]5076', /expected ":port"/],
    ['[2001:2::1]:port', /the port "port" is not a number/],
    ['[not:an:address]', /is not an IPv6 address/],
    ['1.2.3.4:99999', /the port 99999 is out of range/],
    ['1.2.3.4:', /the port "" is not a number/],
    ['1.2.3.400', /"1.2.3.400" is not an IPv4 address/],
    ['224.0.1.1@eth0,1', /the ",TTL" must come before "@interface"/],
    ['224.0.1.1,x@eth0', /the TTL "x" is not a number/],
    ['224.0.1.1,300', /the TTL "300" is not a number from 0 to 255/],
    ['224.0.1.1,1@', /"" is not an interface/],
    [':5076', /no host/],
    ['bad_host!', /is not an address or a host name/],
  ])('%s is refused in one line naming it', (entry, why) => {
    const r = parsePvaAddress(entry, 5076);
    expect(r).toHaveProperty('bad');
    const bad = (r as { bad: string }).bad;
    expect(bad).toMatch(why);
    expect(bad.startsWith(`"${entry}"`)).toBe(true);
    expect(bad).not.toContain('\n');
  });

  it('lists: whitespace or an array; bad entries skipped', () => {
    expect(parsePvaAddressList(' 1.2.3.4  [2001:2::1]:9\tnope:x ', 5076, 'TEST_LIST').map(formatPvaAddress)).toEqual([
      '1.2.3.4:5076',
      '[2001:2::1]:9',
    ]);
    expect(parsePvaAddressList(['1.2.3.4 5.6.7.8', '224.0.1.1,2@eth0'], 1, 'TEST_LIST').map(formatPvaAddress)).toEqual([
      '1.2.3.4:1',
      '5.6.7.8:1',
      '224.0.1.1:1,2@eth0',
    ]);
    expect(parsePvaAddressList(undefined, 1, 'TEST_LIST')).toEqual([]);
  });

  it('multicast ranges, printing, interfaces', () => {
    expect(['224.0.0.1', '239.255.255.255', 'ff02::1', 'FF05::2'].map(isMulticast)).toEqual([true, true, true, true]);
    expect(['223.255.255.255', '240.0.0.1', 'fe80::1', '2001:2::1', 'myhost'].map(isMulticast)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(hostPort('2001:2::1', 5075)).toBe('[2001:2::1]:5075');
    expect(hostPort('198.18.0.1', 5075)).toBe('198.18.0.1:5075');
    expect(multicastInterface(4, 'eth0', IFACES)).toBe('198.18.0.2');
    expect(multicastInterface(4, '198.18.0.2', IFACES)).toBe('198.18.0.2');
    expect(multicastInterface(4, 'eth9', IFACES)).toBeUndefined();
    expect(multicastInterface(6, 'eth0', IFACES)).toBe('::%eth0');
    expect(multicastInterface(6, '2001:2::2', IFACES)).toBe('::%eth0');
    expect(multicastInterface(6, 'eth9', IFACES)).toBeUndefined();
  });
});

describe('PVA search destinations', () => {
  const parse = (s: string) => parsePvaAddressList(s, 5076, 'TEST_LIST');
  const any = parse('0.0.0.0 [::]');

  it('IPv4 unicast, broadcast, multicast and IPv6, with the automatic broadcasts', () => {
    const d = pvaSearchDestinations(
      parse('198.18.0.1 198.19.255.255 224.0.1.7,2@eth0 [2001:2::1] [ff02::1:1]@eth0'),
      true,
      5076,
      any,
      IFACES,
    );
    expect(d).toEqual([
      { host: '198.18.0.1', port: 5076, broadcast: false, family: 4, multicast: false },
      { host: '198.19.255.255', port: 5076, broadcast: true, family: 4, multicast: false },
      { host: '224.0.1.7', port: 5076, broadcast: false, family: 4, multicast: true, ttl: 2, iface: 'eth0' },
      { host: '2001:2::1', port: 5076, broadcast: false, family: 6, multicast: false },
      { host: 'ff02::1:1', port: 5076, broadcast: false, family: 6, multicast: true, iface: 'eth0' },
      { host: '198.18.0.255', port: 5076, broadcast: true, family: 4, multicast: false },
    ]);
  });

  it('repeats merge keeping the longest TTL; a group on two interfaces stays two', () => {
    const d = pvaSearchDestinations(
      parse('224.0.1.7,2@eth0 224.0.1.7,5@eth0 224.0.1.7@eth1 1.2.3.4 1.2.3.4:5076'),
      false,
      5076,
      any,
      IFACES,
    );
    expect(d.map((x) => [x.host, x.ttl, x.iface])).toEqual([
      ['224.0.1.7', 5, 'eth0'],
      ['224.0.1.7', undefined, 'eth1'],
      ['1.2.3.4', undefined, undefined],
    ]);
  });

  it('the automatic list follows the interfaces: only the broadcast of a listed interface address', () => {
    const d = pvaSearchDestinations([], true, 5076, parse('198.19.5.2'), IFACES);
    expect(d.map((x) => x.host)).toEqual(['198.19.255.255']);
    // No interface but loopback: 127.0.0.1, as before.
    expect(pvaSearchDestinations([], true, 5076, any, { lo: IFACES.lo }).map((x) => x.host)).toEqual(['127.0.0.1']);
  });

  it('resolvePvaConfig: PVXS_ENABLE_IPV6, interfaces, name servers', () => {
    const env = {
      EPICS_PVA_ADDR_LIST: '198.18.0.1 [2001:2::1]:5099 239.1.1.1,1@eth0',
      EPICS_PVA_AUTO_ADDR_LIST: 'NO',
      EPICS_PVA_NAME_SERVERS: '[2001:2::1] 198.18.0.1:7000 224.0.1.1',
      EPICS_PVA_SERVER_PORT: '5085',
    };
    const on = resolvePvaConfig({ env }, IFACES);
    expect(on.ipv6).toBe(true);
    expect(on.searchDestinations.map((d) => hostPort(d.host, d.port))).toEqual(['198.18.0.1:5076', '[2001:2::1]:5099', '239.1.1.1:5076']);
    expect(on.nameServers.map(formatPvaAddress)).toEqual(['[2001:2::1]:5085', '198.18.0.1:7000']);
    expect(on.interfaces.map(formatPvaAddress)).toEqual(['0.0.0.0:0', '[::]:0']);

    const off = resolvePvaConfig({ env: { ...env, PVXS_ENABLE_IPV6: 'no', EPICS_PVA_INTF_ADDR_LIST: '198.18.0.2 [2001:2::2]' } }, IFACES);
    expect(off.ipv6).toBe(false);
    expect(off.searchDestinations.map((d) => d.host)).toEqual(['198.18.0.1', '239.1.1.1']);
    expect(off.nameServers.map((a) => a.host)).toEqual(['198.18.0.1']);
    expect(off.interfaces.map((a) => a.host)).toEqual(['198.18.0.2']);

    // Options win over the environment.
    const opt = resolvePvaConfig(
      { env: { ...env, PVXS_ENABLE_IPV6: 'NO' }, pvaEnableIpv6: true, pvaNameServers: '[::1]:1', pvaInterfaces: ['[::]'], pvaAddrList: [] },
      IFACES,
    );
    expect(opt.nameServers).toEqual([{ family: 6, host: '::1', port: 1, multicast: false }]);
    expect(opt.interfaces).toEqual([{ family: 6, host: '::', port: 0, multicast: false }]);
    expect(opt.searchDestinations).toEqual([]);
    expect(resolvePvaConfig({ env: { PVXS_ENABLE_IPV6: 'NO' } }, IFACES).interfaces.map((a) => a.host)).toEqual(['0.0.0.0']);
  });
});

describe('the 16-byte address of a search reply', () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  it.each([
    [ipv4Mapped('198.18.0.1'), '198.18.0.1'],
    [ipv4Mapped('0.0.0.0'), undefined],
    [new Uint8Array(16), undefined],
    [bytes(0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), '2001:2::1'],
    [bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), '::1'],
    [bytes(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0xab, 0xcd), 'fe80::1234:0:0:abcd'],
    [bytes(0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1), 'ff02::1:1'],
    [bytes(0x20, 0x01, 0xd, 0xb8, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1), '2001:db8:1:0:1::1'],
    [bytes(0x20, 0x01, 0xd, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6), '2001:db8:1:2:3:4:5:6'],
  ])('%s', (addr, want) => {
    expect(addressOf(addr)).toBe(want);
  });
});
