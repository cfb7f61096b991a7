// The pieces of running on other hosts that need no network: what --hosts and --place accept,
// what an agent refuses to run, the key files and their encoding, and how reports name a host.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { curveKeyPair } from 'zeromq';
import { parseHosts, parsePlace } from '../../src/bench/placement.js';
import { readKeyPair, readPublicKey, refuseRequest, writeKeyPair, z85Decode } from '../../src/hosts/wire.js';
import { clientLabel, groupByClient } from '../../src/report/table.js';
import { TASKS } from '../../src/clients/registry.js';

describe('--hosts and --place', () => {
  it('takes name=tcp://ADDR:PORT pairs', () => {
    expect(parseHosts('a=tcp://198.18.0.2:5599, b=tcp://host-b.example:6000')).toEqual([
      { name: 'a', endpoint: 'tcp://198.18.0.2:5599' },
      { name: 'b', endpoint: 'tcp://host-b.example:6000' },
    ]);
  });

  it.each([
    ['a', /name=tcp/],
    ['a=198.18.0.2:5599', /not tcp:\/\/ADDR:PORT/],
    ['a=tcp://198.18.0.2:70000', /not tcp:\/\/ADDR:PORT/],
    ['local=tcp://198.18.0.2:5599', /this host's name/],
    ['a=tcp://h:1,a=tcp://h:2', /named twice/],
    ['a b=tcp://h:1', /letters, digits/],
    [',', /empty/],
  ])('refuses %s', (text, why) => {
    expect(() => parseHosts(text)).toThrow(why);
  });

  it('places clients and the IOC on known hosts only', () => {
    expect([...parsePlace('node=a,ioc=local', ['a', 'b'], ['node', 'pyepics'])]).toEqual([
      ['node', 'a'],
      ['ioc', 'local'],
    ]);
    expect(parsePlace(undefined, ['a'], ['node']).size).toBe(0);
    expect(() => parsePlace('node=c', ['a'], ['node'])).toThrow(/no host c/);
    expect(() => parsePlace('caproto=a', ['a'], ['node'])).toThrow(/not a client of this run/);
    expect(() => parsePlace('node=a,node=b', ['a', 'b'], ['node'])).toThrow(/placed twice/);
    expect(() => parsePlace('node', ['a'], ['node'])).toThrow(/client=host/);
  });
});

describe('what an agent runs', () => {
  const ok = {
    task: 'monitor',
    args: ['--samples', '10', '--check-all'],
    env: { EPICS_CA_SERVER_PORT: '5064' },
    names: ['TEST:CALC1'],
  };

  it('a task of the runners with plain options, EPICS_* variables and PV names', () => {
    expect(refuseRequest(ok)).toBeUndefined();
  });

  it("every task the clients' declarations may name, and nothing else", () => {
    for (const task of TASKS) expect(refuseRequest({ ...ok, task }), task).toBeUndefined();
    expect(refuseRequest({ ...ok, task: 'snapshots' })).toBe(`task snapshots is not one of ${[...TASKS, 'capture'].join(', ')}`);
  });

  it.each([
    [{ task: 'sh' }, /task sh/],
    [{ args: ['--names', '/etc/passwd'] }, /plain words/],
    [{ args: ['--x; rm -rf /'] }, /plain words/],
    [{ env: { LD_PRELOAD: '/tmp/x.so' } }, /EPICS_\* variables only, not LD_PRELOAD/],
    [{ env: { EPICS_CA_ADDR_LIST: 'a\nb' } }, /EPICS_\*/],
    [{ names: ['two words'] }, /not plain names/],
  ])('refuses %j', (change, why) => {
    expect(refuseRequest({ ...ok, ...change })).toMatch(why);
  });

  const capture = (args: string[]) => ({ ...ok, task: 'capture', args });
  it("takes a capture's options, each of its kind: a plain file name, numbers, a regular expression, JSON objects", () => {
    const args = ['--out', 'node.h5', '--flush-ms', '1000', '--gap-check', '(^|:)(CALC\\d+|ARRAY)$', '--connect-timeout-ms', '30000'];
    expect(refuseRequest(capture([...args, '--options', '{"seconds": 5}', '--environment', '{}', '--force']))).toBeUndefined();
  });

  it.each([
    [['--out', '/tmp/x.h5'], /plain name ending \.h5, not a path/],
    [['--out', '../x.h5'], /plain name/],
    [['--out', 'x.txt'], /plain name/],
    [['--flush-ms', '1e3'], /--flush-ms is not a number/],
    [['--gap-check', '('], /--gap-check is not a regular expression/],
    [['--options', '[1]'], /--options is not a JSON object/],
    [['--environment', `{"x": "${'y'.repeat(70_000)}"}`], /--environment is not a JSON object of at most 65536 bytes/],
    [['--names', 'other.txt'], /--names is not an option of the capture runner/],
    [['--out'], /--out has no value/],
  ])('refuses the capture options %j', (args, why) => {
    expect(refuseRequest(capture(args))).toMatch(why);
  });
});

describe('keys', () => {
  it('Z85 decodes as ZeroMQ encodes (RFC 32 test vector, and a generated key of 32 bytes)', () => {
    expect([...z85Decode('HelloWorld')]).toEqual([0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b]);
    expect(z85Decode(curveKeyPair().publicKey)).toHaveLength(32);
    expect(() => z85Decode('abc')).toThrow();
  });

  it("round-trips through the key files; the private one is the owner's only", () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-keys-'));
    try {
      const pair = curveKeyPair();
      const { secretPath, publicPath } = writeKeyPair(dir, 'a', pair);
      expect(readKeyPair(dir, 'a')).toEqual(pair);
      expect(readPublicKey(publicPath, 'x')).toBe(pair.publicKey);
      expect(statSync(secretPath).mode & 0o777).toBe(0o600);
      expect(() => writeKeyPair(dir, 'a', pair)).toThrow(/exists already/);
      expect(() => readKeyPair(dir, 'b')).toThrow(/no key "b": .* cannot be read \(make one with `epicsperf agent --keygen b/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reports', () => {
  it('name a client by its host when it ran on another one', () => {
    expect(clientLabel({ client: 'node' })).toBe('node');
    expect(clientLabel({ client: 'node', host: 'a' })).toBe('node@a');
    const runs = [
      { client: 'node', host: 'a' },
      { client: 'node', host: 'b' },
      { client: 'node', host: 'a' },
    ];
    expect([...groupByClient(runs)].map(([k, v]) => [k, v.length])).toEqual([
      ['node@a', 2],
      ['node@b', 1],
    ]);
  });
});
