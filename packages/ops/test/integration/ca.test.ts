// `epics-ops ca get|put|monitor|info` as a user runs them (the real binary) against the test
// IOC: caget's, caput's, camonitor's and cainfo's output layouts and exit codes; puts checked with pyepics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import { pyepicsRead } from 'epicsperf-testkit/client-helpers';
import { runOps } from 'epicsperf-testkit/cli';
import { type BaseTool, baseTools, runBaseTool } from 'epicsperf-testkit/base-tools';
import { KINDS } from 'epicsperf-testkit/kinds';

let ioc: Ioc;
let env: Record<string, string>;
const K = 'TEST:KIND:';
/** `%-30s ` as the C tools print a scalar's name. */
const col = (name: string): string => `${name.padEnd(30)} `;
const STAMP = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}/;

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
  env = { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' };
});

afterAll(async () => {
  await ioc?.stop();
});

const ca = (...args: string[]): ReturnType<typeof runOps> => runOps(['ca', ...args], { env, timeoutMs: 30_000 });

describe('ca get', () => {
  it('name and value per line, enums as their state, arrays as count and elements', async () => {
    const r = await ca('get', '-w', '5', `${K}DOUBLE`, `${K}ENUM`, `${K}STRING`, `${K}ARR:LONG`, `${K}FLOAT`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${col(`${K}DOUBLE`)}3.14159\n${col(`${K}ENUM`)}On\n${col(`${K}STRING`)}hello epics\n` +
        `${K}ARR:LONG 10 0 100000 200000 300000 400000 500000 600000 700000 800000 900000\n${col(`${K}FLOAT`)}1.5\n`,
    );
  });

  it('-t terse, -n enum as number, -# count, -S long string, -a wide', async () => {
    expect((await ca('get', '-t', '-n', `${K}ENUM`)).stdout).toBe('1\n');
    expect((await ca('get', '-# ', '3', `${K}ARR:DOUBLE`)).code).toBe(2); // "-# " is no flag
    expect((await ca('get', '-#', '3', `${K}ARR:DOUBLE`)).stdout).toBe(`${K}ARR:DOUBLE 3 0 1.25 2.5\n`);
    expect((await ca('get', '-#3', '-t', `${K}ARR:SHORT`)).stdout).toBe('3 0 -300 -600\n');
    expect((await ca('get', '-F', ',', '-#', '3', `${K}ARR:SHORT`, `${K}SHORT`)).stdout).toBe(
      `${K}ARR:SHORT,3,0,-300,-600\n${K}SHORT,1,-1234\n`,
    );
    const s = await ca('get', '-S', `${K}LONGSTRING`);
    expect(s.stdout).toBe(`${K}LONGSTRING A long string held in a char waveform, longer than the 40 characters of DBR_STRING.\n`);
    const wide = await ca('get', '-a', 'TEST:CALC1', `${K}LONG`);
    const [calc, long] = wide.stdout.split('\n');
    expect(calc).toMatch(new RegExp(`^${col('TEST:CALC1')}${STAMP.source} \\d+ HIGH MINOR$`));
    expect(long).toMatch(new RegExp(`^${col(`${K}LONG`)}${STAMP.source} -?\\d+  $`));
  });

  it('-d: the requested DBR type with every field', async () => {
    const r = await ca('get', '-d', 'CTRL_DOUBLE', `${K}DOUBLE`);
    expect(r.stdout).toBe(
      [
        `${K}DOUBLE`,
        '    Native data type: DBF_DOUBLE',
        '    Request type:     DBR_CTRL_DOUBLE',
        '    Element count:    1',
        '    Value:            3.14159',
        '    Status:           NO_ALARM',
        '    Severity:         NO_ALARM',
        '    Units:            mm',
        '    Precision:        4',
        '    Lo disp limit:    -10',
        '    Hi disp limit:    10',
        '    Lo alarm limit:   -9',
        '    Lo warn limit:    -8',
        '    Hi warn limit:    8',
        '    Hi alarm limit:   9',
        '    Lo ctrl limit:    -100',
        '    Hi ctrl limit:    100',
        '',
      ].join('\n'),
    );
    const e = await ca('get', '-d', '31', `${K}ENUM`);
    expect(e.stdout).toContain('    Request type:     DBR_CTRL_ENUM\n');
    expect(e.stdout).toContain(
      '    Enums:            ( 3)\n                      [ 0] Off\n                      [ 1] On\n                      [ 2] Fault\n',
    );
    const t = await ca('get', '-d', 'DBR_TIME_LONG', `${K}LONG`);
    expect(t.stdout).toMatch(new RegExp(`    Timestamp:        ${STAMP.source}\n`));
  });

  it("a PV not found: caget's message, the others still printed, exit 1", async () => {
    const r = await ca('get', '-w', '0.5', 'TEST:NO:SUCH', `${K}LONGMAX`);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("Channel connect timed out: 'TEST:NO:SUCH' not found.\n");
    expect(r.stdout).toBe(`${col(`${K}LONGMAX`)}2147483647\n`);
  });

  it('bad flags: one line and exit 2', async () => {
    for (const args of [['-x', 'A'], ['-w', 'soon', 'A'], ['-d', 'NOTATYPE', 'A'], ['-#', '0', 'A'], ['-t', '-a', 'A'], [], ['pva://A']]) {
      const r = await ca('get', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });
});

describe("the same output as EPICS base's caget, caput, camonitor and cainfo", () => {
  let tools = '';
  beforeAll(async () => {
    tools = await baseTools();
  }, 120_000);
  const NAMES = KINDS.map((k) => K + k);
  /** The C tool's output and this command's (stdout and stderr), the server's host name aside. */
  async function both(tool: BaseTool, args: string[]): Promise<[string, string]> {
    const command = tool === 'cainfo' ? 'info' : tool.slice(2);
    const [want, got] = await Promise.all([runBaseTool(tools, tool, args, env), ca(command, ...args)]);
    const host = (o: string) => o.replace(/(Host:\s+)\S+/g, '$1HOST');
    return [host(want), host(got.stdout + got.stderr)];
  }

  it.each([[], ['-t'], ['-n'], ['-a'], ['-#', '3'], ['-F', ','], ['-a', '-F', ','], ['-S'], ['-c'], ['-d', 'DBR_TIME_STRING']])(
    'caget %j of every kind of PV',
    async (...flags) => {
      const [want, got] = await both('caget', [...(flags as string[]), ...NAMES]);
      expect(want).toContain('hello epics');
      expect(got).toBe(want);
    },
  );

  it("caget -d in each PV's own CTRL and GR forms", async () => {
    for (const [type, name] of [
      ['DBR_CTRL_ENUM', 'ENUM'],
      ['DBR_GR_FLOAT', 'FLOAT'],
      ['DBR_CTRL_SHORT', 'ARR:SHORT'],
      ['DBR_CTRL_CHAR', 'CHARMAX'],
      ['DBR_STS_LONG', 'LONGMIN'],
    ]) {
      const [want, got] = await both('caget', ['-d', type!, K + name]);
      expect(got).toBe(want);
    }
  });

  it('cainfo, camonitor -t n of a PV that holds still, and caput of the value it has', async () => {
    const [want, got] = await both('cainfo', NAMES);
    expect(got).toBe(want);
    for (const args of [
      ['-t', 'n', `${K}DOUBLE`],
      ['-t', 'n', `${K}ARR:SHORT`],
    ]) {
      const [m0, m1] = await Promise.all([runBaseTool(tools, 'camonitor', args, env, 1000), ca('monitor', '--updates', '1', ...args)]);
      expect(m1.stdout).toBe(m0);
    }
    for (const args of [
      [`${K}LONG`, '42'],
      ['-c', `${K}ENUM`, 'On'],
      ['-t', `${K}FLOAT`, '1.5'],
      ['-l', `${K}SHORT`, '-1234'],
      ['-a', `${K}ARR:LONG`, '10', ...Array.from({ length: 10 }, (_, i) => String(i * 100000))],
    ]) {
      // (a put processes the record: its time moves)
      const [want, got] = (await both('caput', args)).map((o) => o.replace(new RegExp(STAMP.source, 'g'), 'TIME'));
      expect(got, args.join(' ')).toBe(want);
    }
  });
});

describe('ca put', () => {
  it('prints old and new values; the IOC has the new value (read with pyepics)', async () => {
    const r = await ca('put', `${K}LONG`, '7');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Old : ${col(`${K}LONG`)}42\nNew : ${col(`${K}LONG`)}7\n`);
    expect((await pyepicsRead(ioc.env, [`${K}LONG`]))[0]!.value).toBe(7);
  });

  it('-c waits for completion; enums by state name or index; -t prints the new value only', async () => {
    expect((await ca('put', '-c', '-t', `${K}ENUM`, 'Fault')).stdout).toBe('Fault\n');
    expect((await pyepicsRead(ioc.env, [`${K}ENUM`]))[0]!.value).toBe(2);
    expect((await ca('put', '-t', `${K}ENUM`, '0')).stdout).toBe('Off\n');
    const bad = await ca('put', `${K}ENUM`, 'Bogus');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'Bogus' is neither a state nor a state index");
  });

  it('-S writes a long string as text; -a writes an array; words of a string value are joined', async () => {
    await ca('put', '-S', `${K}LONGSTRING`, 'a new long string, longer than forty characters of DBR_STRING');
    const [ls] = await pyepicsRead(ioc.env, [`${K}LONGSTRING`]);
    expect(ls!.char_value).toBe('a new long string, longer than forty characters of DBR_STRING');
    const a = await ca('put', '-a', '-t', `${K}ARR:DOUBLE`, '3', '1.5', '-2', '1e3');
    // caput reads back the whole array (its element count), the rest zeros, as EPICS base's caput prints it.
    expect(a.stdout).toBe('10 1.5 -2 1000 0 0 0 0 0 0 0\n');
    expect((await pyepicsRead(ioc.env, [`${K}ARR:DOUBLE`]))[0]!.value).toEqual([1.5, -2, 1000]);
    expect((await ca('put', '-t', `${K}STRING`, 'two', 'words')).stdout).toBe('two words\n');
    const long = (await ca('put', '-l', `${K}STRING`, 'three')).stdout.split('\n');
    expect(long[0]).toMatch(new RegExp(`^Old : ${col(`${K}STRING`)}${STAMP.source} two words  $`));
    expect(long[1]).toMatch(new RegExp(`^New : ${col(`${K}STRING`)}${STAMP.source} three  $`));
  });

  it('bad values and flags exit 2; a PV not found exits 1', async () => {
    expect((await ca('put', `${K}DOUBLE`, 'abc')).code).toBe(2);
    expect((await ca('put', '-a', `${K}ARR:DOUBLE`, '2', '1')).code).toBe(2);
    expect((await ca('put', `${K}DOUBLE`)).code).toBe(2);
    const r = await ca('put', '-w', '0.5', 'TEST:NO:SUCH', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("Channel connect timed out: 'TEST:NO:SUCH' not found.\n");
  });
});

describe('ca monitor', () => {
  it('one wide line per update; a PV not found is reported and the rest go on', async () => {
    const r = await ca('monitor', '-w', '0.5', '--updates', '12', 'TEST:CALC1', 'TEST:NO:SUCH');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContain(`${'TEST:NO:SUCH'.padEnd(30)} *** Not connected (PV not found)`);
    const ups = lines.filter((l) => l.startsWith('TEST:CALC1'));
    expect(ups).toHaveLength(12);
    const values = ups.map((l) => {
      expect(l).toMatch(new RegExp(`^${col('TEST:CALC1')}${STAMP.source} \\d+ HIGH MINOR$`));
      return Number(l.split(' ').at(-3));
    });
    for (let i = 1; i < values.length; i++) expect(values[i]).toBe(values[i - 1]! + 1);
  });

  it('-t n drops timestamps, -t sr prints them relative to the first', async () => {
    const n = await ca('monitor', '--updates', '2', '-t', 'n', 'TEST:CALC2');
    for (const l of n.stdout.trim().split('\n')) expect(l).toMatch(/^TEST:CALC2 {22}\d+ HIGH MINOR$/);
    const rel = (await ca('monitor', '--updates', '3', '-t', 'sr', 'TEST:CALC2')).stdout.trim().split('\n');
    expect(rel[0]).toMatch(STAMP);
    expect(rel[2]).toMatch(/^TEST:CALC2 {21} {14} +\+0\.\d{6} \d+ HIGH MINOR$/);
  });

  it('bad flags exit 2', async () => {
    expect((await ca('monitor', '-m', 'x', 'TEST:CALC1')).code).toBe(2);
    expect((await ca('monitor', '-t', 'q', 'TEST:CALC1')).code).toBe(2);
  });
});

describe('ca info', () => {
  it("cainfo's block for each PV; a PV not found exits 1", async () => {
    const r = await ca('info', `${K}ARR:SHORT`, `${K}ENUM`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `${K}ARR:SHORT`,
        '    State:            connected',
        `    Host:             127.0.0.1:${ioc.caPort}`,
        '    Access:           read, write',
        '    Native data type: DBF_SHORT',
        '    Request type:     DBR_SHORT',
        '    Element count:    10',
        `${K}ENUM`,
        '    State:            connected',
        `    Host:             127.0.0.1:${ioc.caPort}`,
        '    Access:           read, write',
        '    Native data type: DBF_ENUM',
        '    Request type:     DBR_ENUM',
        '    Element count:    1',
        '',
      ].join('\n'),
    );
    const missing = await ca('info', '-w', '0.5', 'TEST:NO:SUCH');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("Channel connect timed out: 'TEST:NO:SUCH' not found.\n");
  });
});
