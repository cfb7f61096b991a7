// `epics-ops snapshot` as a user runs it (the real binary) on the test IOC: its table, CSV and
// PVA reads, an unreachable IOC as a result, and bad input in one line with exit 2.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import { errorLines, runOps } from 'epicsperf-testkit/cli';

let ioc: Ioc;

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
});

afterAll(async () => {
  await ioc?.stop();
});

describe('epics-ops snapshot', () => {
  it('prints a table with a summary line, and exits 0 when every PV answered', async () => {
    const r = await runOps(['snapshot', '-', '--timeout', '2000'], { env: ioc.env, input: 'TEST:CALC1\n# a comment\n\nTEST:KIND:LONG\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^name\s+value\s+severity/);
    expect(r.stdout).toMatch(/TEST:KIND:LONG\s+42\s+NO_ALARM/);
    expect(r.stdout).toMatch(/2 answered, 0 failed in [\d.]+ s \(client epics-client, timeout 2000 ms\)/);
  });

  it('over PV Access with --protocol pva, names with pva:// and ca:// alike', async () => {
    const r = await runOps(['snapshot', '-', '--protocol', 'pva', '--format', 'json'], {
      env: ioc.env,
      input: 'TEST:KIND:LONG\nca://TEST:KIND:STRING\n',
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { client: string; rows: { name: string; value: unknown }[] };
    expect(out.client).toBe('epics-client');
    expect(out.rows.map((x) => [x.name, x.value])).toEqual([
      ['TEST:KIND:LONG', 42],
      ['ca://TEST:KIND:STRING', 'hello epics'],
    ]);
  });

  it('writes CSV', async () => {
    const r = await runOps(['snapshot', '-', '--format', 'csv'], { env: ioc.env, input: 'TEST:KIND:STRING\nTEST:NOPE\n' });
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('name,ok,value,severity,status,timestamp,elapsed_ms,error');
    expect(lines[1]).toMatch(/^TEST:KIND:STRING,true,hello epics,NO_ALARM,NO_ALARM,20\d\d-/);
    expect(lines[2]).toMatch(/^TEST:NOPE,false,/);
  });

  it('an unreachable IOC is a result: every PV fails after its timeout, exit 1', async () => {
    const env = { EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: '9' };
    const r = await runOps(['snapshot', '-', '--timeout', '500'], { input: 'A:B\nC:D\n', env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/0 answered, 2 failed/);
    expect(r.ms).toBeLessThan(5000);
  });

  const dir = mkdtempSync(join(tmpdir(), 'epics-ops-cli-'));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  it.each([
    ['an empty PV file', () => ['snapshot', file('empty.txt', '# nothing\n\n')], /has no PV names/],
    ['an unreadable PV file', () => ['snapshot', join(dir, 'nope.txt')], /cannot read PV list .*no such file/],
    ['duplicate names', () => ['snapshot', file('dup.txt', 'A:B\nC:D\nA:B\n')], /line 3: duplicate PV name A:B \(first on line 1\)/],
    ['a bad timeout', () => ['snapshot', 'fixtures/pvs.txt', '--timeout', 'soon'], /--timeout.*invalid/],
    [
      'a bad format',
      () => ['snapshot', 'fixtures/pvs.txt', '--format', 'xml'],
      /option '--format <format>' argument 'xml' is invalid\. Allowed choices are table, json, csv/,
    ],
  ])('rejects %s with one line and exit 2', async (_what, args, re) => {
    const r = await runOps(args());
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr, 'epics-ops')).toHaveLength(1);
    expect(r.stderr).toMatch(re);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
