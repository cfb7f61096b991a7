// The snapshot files of other tools: Phoebus save-and-restore CSV, PSI snapshot .snap and autosave
// .sav read from samples written after each tool's source, written back and read again (alone
// and through each other), autosave .req files with includes and macros, format detection, and
// bad files refused with a BadArgumentError naming the file and line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadArgumentError } from '../../src/client/errors.js';
import {
  isAutosaveReq,
  parseAutosaveReq,
  SNAPSHOT_FORMATS,
  snapshotFormatForName,
  snapshotFormatOf,
  parseAutosaveSav,
  parsePhoebusCsv,
  parsePsiSnap,
  writeAutosaveSav,
  writePhoebusCsv,
  writePsiSnap,
} from '../../src/saveset/formats/index.js';
import type { SavedPv, SaveSet } from '../../src/saveset/types.js';

const DIR = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'saveset');
const REQ = join(DIR, 'req');
const fixture = (name: string): string => readFileSync(join(DIR, name), 'utf8');

/** The error a call throws: a BadArgumentError, whose message is returned. */
function badArgument(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(BadArgumentError);
    return (e as Error).message;
  }
  throw new Error('no error was thrown');
}

/** What survives every format: name, whether it answered, value and read-only. */
const essentials = (set: SaveSet): Array<Pick<SavedPv, 'name' | 'ok' | 'value'> & { readOnly: boolean }> =>
  set.pvs.map((pv) => ({ name: pv.name, ok: pv.ok, value: pv.value, readOnly: pv.readOnly === true }));

describe('Phoebus save-and-restore CSV', () => {
  const set = parsePhoebusCsv(fixture('phoebus-snapshot.csv'), 'phoebus-snapshot.csv');

  it('reads the comment block into the metadata', () => {
    expect(set.meta).toEqual({
      source: 'phoebus-csv',
      comment: 'RF amplitudes and modes\nbefore the winter shutdown',
      user: 'operator1',
      time: '2024-12-18T16:42:05.123',
      labels: ['golden', 'winter'],
    });
  });

  it('reads scalars, an enum, strings, an array, a read-only and a not-connected PV', () => {
    expect(set.pvs).toEqual([
      {
        name: 'LN:RF1:AmpSet',
        ok: true,
        value: 12.5,
        type: 'double',
        count: 1,
        severity: 0,
        status: 0,
        seconds: 1734536525,
        nanoseconds: 123456789,
        readbackName: 'LN:RF1:AmpRb',
      },
      // Phoebus writes getNano() after the '.', so ".5000000" is 5 000 000 ns.
      {
        name: 'LN:RF1:Mode',
        ok: true,
        value: 2,
        type: 'enum',
        count: 1,
        enumStrings: ['Off', 'CW', 'Pulsed'],
        severity: 0,
        status: 0,
        seconds: 1734536525,
        nanoseconds: 5000000,
      },
      { name: 'LN:RF1:Count', ok: true, value: 42, type: 'int', count: 1, severity: 0, status: 0, seconds: 1734536526, nanoseconds: 0 },
      {
        name: 'LN:RF1:Label',
        ok: true,
        value: 'Klystron 1, north',
        type: 'string',
        count: 1,
        severity: 0,
        status: 0,
        seconds: 1734536526,
        nanoseconds: 0,
      },
      // RECORD is a Phoebus category, not an EPICS status: no status is kept.
      {
        name: 'LN:RF1:Table',
        ok: true,
        value: [1, 2.5, -0.0003],
        type: 'double',
        count: 3,
        severity: 1,
        seconds: 1734536526,
        nanoseconds: 0,
      },
      {
        name: 'LN:RF1:Serial',
        ok: true,
        value: 'SN-0042',
        type: 'string',
        count: 1,
        severity: 0,
        status: 0,
        seconds: 1734536526,
        nanoseconds: 0,
        readOnly: true,
      },
      { name: 'LN:RF1:Tiny', ok: true, value: 1e-7, type: 'float', count: 1, severity: 0, status: 0, seconds: 1734536526, nanoseconds: 0 },
      { name: 'LN:RF1:Offline', ok: false, error: 'not connected when saved (no value in the Phoebus snapshot)' },
    ]);
  });

  it("writes rows in the exporter's columns and reads them back unchanged", () => {
    const text = writePhoebusCsv(set, { name: 'RF before shutdown' });
    const lines = text.split('\n');
    expect(lines).toContain('PV,SELECTED,TIMESTAMP,STATUS,SEVERITY,VALUE_TYPE,VALUE,READBACK,READBACK_VALUE,DELTA,READ_ONLY');
    expect(lines).toContain('LN:RF1:Mode,1,1734536525.5000000,NONE,NONE,enum,"Pulsed~[Off;CW;Pulsed]",,"---",,0');
    expect(lines).toContain('LN:RF1:Table,1,1734536526.0,,MINOR,double_array,"[1;2.5;-0.0003]",,"---",,0');
    expect(lines).toContain('LN:RF1:Serial,1,1734536526.0,NONE,NONE,string,"SN-0042",,"---",,1');
    expect(lines).toContain('LN:RF1:Offline,1,,,,na,"---",,"---",,0');
    expect(lines).toContain('# "golden","",operator1,2024-12-18 16:42:05.123');
    expect(lines.slice(0, 5)).toEqual([
      "# AUTO-GENERATED. DON'T EDIT BELOW IF YOU DON'T KNOW HOW THOSE WORK!",
      '# Hierarchy:',
      '# RF before shutdown',
      '# Snapshot name:',
      '# RF before shutdown',
    ]);
    const again = parsePhoebusCsv(text);
    expect(again.pvs).toEqual(set.pvs);
    expect(again.meta).toEqual(set.meta);
  });

  it('reads a save set (configuration) file as names only, none answered; writes one back', () => {
    const conf = parsePhoebusCsv(fixture('phoebus-saveset.csv'));
    expect(conf.meta.comment).toBe('The RF setpoints');
    expect(conf.pvs.map((pv) => [pv.name, pv.ok, pv.readOnly, pv.readbackName])).toEqual([
      ['LN:RF1:AmpSet', false, undefined, 'LN:RF1:AmpRb'],
      ['LN:RF1:Mode', false, undefined, undefined],
      ['LN:RF1:Serial', false, true, undefined],
    ]);
    const text = writePhoebusCsv(set, { form: 'configuration', name: 'RF settings' });
    expect(text).toContain('# SaveSet name:\n# RF settings\n');
    expect(text.split('\n').slice(-4)).toEqual(['LN:RF1:Serial,,1', 'LN:RF1:Tiny,,0', 'LN:RF1:Offline,,0', '']);
    expect(text).toContain('PV,READBACK,READ_ONLY\nLN:RF1:AmpSet,LN:RF1:AmpRb,0\n');
  });

  it('writes a type Phoebus imports for CA and unsigned types, and an enum without state names by index', () => {
    const text = writePhoebusCsv({
      meta: { time: '2024-01-02T03:04:05' },
      pvs: [
        { name: 'W:char', ok: true, value: [200, 10], type: 'char', count: 2 },
        { name: 'W:ulong', ok: true, value: '18000000000000000000', type: 'ulong', count: 1 },
        { name: 'W:long', ok: true, value: 7, type: 'long', count: 1 },
        { name: 'W:enum', ok: true, value: 3, type: 'enum', count: 1 },
        { name: 'W:flag', ok: true, value: true, type: 'boolean', count: 1 },
        { name: 'W:nan', ok: true, value: NaN, type: 'double', count: 1 },
        // A char array kept as text stays text (only a 64-bit type's digits are a number).
        { name: 'W:text', ok: true, value: '12345', type: 'char', count: 6 },
      ],
    });
    expect(text).toContain('W:text,1,,,,string,"12345",');
    expect(text).toContain('# Date:\n# 2024-01-02 03:04:05.000\n');
    expect(text).toContain(',short_array,"[200;10]",');
    expect(text).toContain(',long,"18000000000000000000",');
    expect(text).toContain(',long,"7",');
    expect(text).toContain(',enum,"3~[0;1;2;3]",');
    expect(text).toContain(',boolean,"true",');
    expect(text).toContain(',double,"NaN",');
    const back = parsePhoebusCsv(text).pvs;
    expect(back.map((pv) => pv.value)).toEqual([[200, 10], '18000000000000000000', 7, 3, true, NaN, '12345']);
    // State names "0".."3" were made up by the writer: not read back as names.
    expect(back[3]!.enumStrings).toBeUndefined();
  });

  it('refuses to write a value Phoebus would read differently', () => {
    const one = (pv: SavedPv): string => badArgument(() => writePhoebusCsv({ meta: {}, pvs: [pv] }));
    expect(one({ name: 'Q:quote', ok: true, value: 'a "b"' })).toBe(
      "Phoebus CSV: PV Q:quote: the value holds '\"', which Phoebus's CSV import cannot read back",
    );
    expect(one({ name: 'Q:tilde', ok: true, value: 'a~b' })).toMatch(/PV Q:tilde: the value holds '~'/);
    expect(one({ name: 'Q:nl', ok: true, value: 'a\nb' })).toMatch(/holds a line break/);
    expect(one({ name: 'Q:bracket', ok: true, value: '[x]' })).toMatch(/starts with '\['/);
    expect(one({ name: 'Q:semi', ok: true, value: ['a;b', 'c'] })).toMatch(/the element 'a;b' holds ';'/);
    expect(one({ name: 'Q,comma', ok: true, value: 1 })).toMatch(/the PV name 'Q,comma' holds ','/);
  });

  it('bad files: wrong column count, unknown value type, bad date, unclosed quote', () => {
    expect(badArgument(() => parsePhoebusCsv(fixture('phoebus-bad-columns.csv'), 'phoebus-bad-columns.csv'))).toBe(
      'phoebus-bad-columns.csv line 7: 12 fields where the header has 11 columns',
    );
    const head = 'PV,SELECTED,TIMESTAMP,STATUS,SEVERITY,VALUE_TYPE,VALUE,READBACK,READBACK_VALUE,DELTA,READ_ONLY\n';
    expect(badArgument(() => parsePhoebusCsv(`${head}A,1,,,,quaternion,"1",,"---",,0\n`, 'x.csv'))).toBe(
      "x.csv line 2: unknown VALUE_TYPE 'quaternion'",
    );
    expect(badArgument(() => parsePhoebusCsv(`${head}A,1,,,,double,"abc",,"---",,0\n`, 'x.csv'))).toBe(
      "x.csv line 2: 'abc' is not a number (VALUE_TYPE double)",
    );
    expect(badArgument(() => parsePhoebusCsv(`${head}A,1,,,,double,"1.5,,"---",,0\n`, 'x.csv'))).toMatch(/^x\.csv line 2: /);
    expect(badArgument(() => parsePhoebusCsv(`# Date:\n# yesterday\n${head}`, 'x.csv'))).toBe(
      "x.csv line 2: date 'yesterday' is not yyyy-MM-dd HH:mm:ss.SSS",
    );
    expect(badArgument(() => parsePhoebusCsv('# only a comment\n', 'x.csv'))).toBe('x.csv: no header line (PV,...) and no rows');
  });
});

describe('PSI snapshot .snap', () => {
  const set = parsePsiSnap(fixture('psi.snap'), 'psi.snap');

  it('reads the metadata: comment, labels, save time', () => {
    expect(set.meta).toEqual({
      source: 'psi-snap',
      comment: 'RF before shutdown, "reference" µs',
      labels: ['golden', 'rf'],
      time: '2024-12-18T15:42:05.250Z',
    });
  });

  it('reads the JSON values of each form, macros replaced, the PV with no value not ok', () => {
    expect(set.pvs).toEqual([
      { name: 'LN:RF1:AmpSet', ok: true, value: 12.5, count: 1 },
      { name: 'LN:RF1:Mode', ok: true, value: 2, count: 1 },
      { name: 'LN:RF1:Count', ok: true, value: 42, count: 1 },
      { name: 'LN:RF1:Label', ok: true, value: 'Klystron 1, north "A"', count: 1 },
      { name: 'LN:RF1:Table', ok: true, value: [1, 2.5, -0.0003], count: 3 },
      { name: 'LN:RF1:Names', ok: true, value: ['a,b', 'c"d', 'é'], count: 3 },
      { name: 'LN:RF1:Phase', ok: true, value: -45, count: 1 },
      { name: 'LN:RF1:Gain', ok: true, value: 7.25, count: 1, units: 'dB', precision: 3 },
      { name: 'LN:RF1:Legacy', ok: true, value: 3.5, count: 1 },
      { name: 'LN:RF1:Fault', ok: true, value: NaN, count: 1 },
      // Beyond 2^53: kept exact as its decimal string.
      { name: 'LN:RF1:Big', ok: true, value: '9007199254740993', count: 1 },
      { name: 'LN:RF1:Offline', ok: false, error: 'no value saved (not connected when saved)' },
    ]);
  });

  it('writes what PSI snapshot writes and reads it back unchanged', () => {
    const text = writePsiSnap(set);
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      '#{"labels": ["golden", "rf"], "comment": "RF before shutdown, \\"reference\\" \\u00b5s", "machine_params": {}, "save_time": 1734536525.25}',
    );
    expect(lines).toContain('LN:RF1:Label,{"val": "Klystron 1, north \\"A\\""}');
    expect(lines).toContain('LN:RF1:Table,{"val": [1, 2.5, -0.0003]}');
    expect(lines).toContain('LN:RF1:Gain,{"egu": "dB", "prec": 3, "val": 7.25}');
    expect(lines).toContain('LN:RF1:Fault,{"val": NaN}');
    expect(lines).toContain('LN:RF1:Offline');
    const again = parsePsiSnap(text);
    expect(again.pvs).toEqual(set.pvs);
    expect(again.meta).toEqual(set.meta);
  });

  it("writes a float PV's whole number as Python does, a read-only PV with read_only", () => {
    const text = writePsiSnap({
      meta: {},
      pvs: [
        { name: 'F:d', ok: true, value: 20, type: 'double' },
        { name: 'F:arr', ok: true, value: [1, 2], type: 'float' },
        { name: 'F:i', ok: true, value: 20, type: 'long', readOnly: true },
        { name: 'F:u64', ok: true, value: '18000000000000000000', type: 'ulong' },
        { name: 'F:text', ok: true, value: '12345', type: 'char' },
      ],
    });
    expect(text.split('\n').slice(1, 6)).toEqual([
      'F:d,{"val": 20.0}',
      'F:arr,{"val": [1.0, 2.0]}',
      'F:i,{"read_only": true, "val": 20}',
      'F:u64,{"val": 18000000000000000000}',
      'F:text,{"val": "12345"}',
    ]);
    expect(parsePsiSnap(text).pvs.map((pv) => [pv.value, pv.readOnly])).toEqual([
      [20, undefined],
      [[1, 2], undefined],
      [20, true],
      ['18000000000000000000', undefined],
      ['12345', undefined],
    ]);
  });

  it('bad files: malformed metadata, malformed value, a "{" value with no "val", a line that is no PV', () => {
    expect(badArgument(() => parsePsiSnap(fixture('psi-bad-header.snap'), 'psi-bad-header.snap'))).toBe(
      'psi-bad-header.snap line 1: the metadata is not JSON: a string is not closed (the text ends too early)',
    );
    expect(badArgument(() => parsePsiSnap(fixture('psi-bad-value.snap'), 'psi-bad-value.snap'))).toBe(
      "psi-bad-value.snap line 3: the value of LN:RF1:Mode is not JSON: expected ',' or ']' at column 26",
    );
    expect(badArgument(() => parsePsiSnap('#{}\nA,{"value": 1}\n', 'x.snap'))).toBe('x.snap line 2: the value of A has no "val"');
    expect(badArgument(() => parsePsiSnap('#[1, 2]\n', 'x.snap'))).toBe('x.snap line 1: the metadata is not a JSON object');
    expect(badArgument(() => parsePsiSnap('not a snapshot\n', 'x.snap'))).toBe('x.snap line 1: "not a snapshot" is not a PV name');
    expect(badArgument(() => writePsiSnap({ meta: {}, pvs: [{ name: 'A,B', ok: true, value: 1 }] }))).toMatch(
      /^PSI snapshot: the PV name 'A,B' cannot be written/,
    );
  });
});

describe('across formats', () => {
  it('Phoebus → save set → PSI → save set → Phoebus keeps names, values, read-only and ok', () => {
    const phoebus = parsePhoebusCsv(fixture('phoebus-snapshot.csv'));
    const viaPsi = parsePsiSnap(writePsiSnap(phoebus));
    expect(essentials(viaPsi)).toEqual(essentials(phoebus));
    expect(viaPsi.meta.comment).toBe(phoebus.meta.comment);
    expect(viaPsi.meta.labels).toEqual(['golden', 'winter']);
    const back = parsePhoebusCsv(writePhoebusCsv(viaPsi));
    expect(essentials(back)).toEqual(essentials(phoebus));
    expect(back.pvs.find((pv) => pv.name === 'LN:RF1:Serial')!.readOnly).toBe(true);
  });

  it('PSI → Phoebus → PSI keeps names, values and ok (strings with commas included)', () => {
    const psi = parsePsiSnap(fixture('psi.snap'));
    // Phoebus cannot carry '"' inside a value: the PVs that hold one are left out here.
    const writable = {
      ...psi,
      pvs: psi.pvs.filter(
        (pv) =>
          !JSON.stringify(pv.value ?? '')
            .slice(1, -1)
            .includes('\\"'),
      ),
    };
    expect(writable.pvs.map((pv) => pv.name)).not.toContain('LN:RF1:Label');
    const back = parsePsiSnap(writePsiSnap(parsePhoebusCsv(writePhoebusCsv(writable))));
    expect(essentials(back)).toEqual(essentials(writable));
  });

  it('autosave → PSI and Phoebus keeps names, values and ok', () => {
    const sav = parseAutosaveSav(fixture('auto_settings.sav'));
    const plain = { ...sav, pvs: sav.pvs.filter((pv) => pv.name !== 'xxx:m1.DESC' && pv.name !== 'xxx:names') };
    expect(essentials(parsePsiSnap(writePsiSnap(sav)))).toEqual(essentials(sav));
    expect(essentials(parsePhoebusCsv(writePhoebusCsv(plain)))).toEqual(essentials(plain));
  });
});

describe('autosave .sav', () => {
  const set = parseAutosaveSav(fixture('auto_settings.sav'), 'auto_settings.sav');

  it('reads the header date and the not-connected note', () => {
    expect(set.meta).toEqual({
      source: 'autosave-sav',
      time: '2024-12-18T16:42:05',
      comment: '1 channel(s) not connected - or not all gets were successful',
    });
  });

  it('reads numbers as numbers, other values as text, escapes undone, arrays over two lines, a # PV not ok', () => {
    const long = Array.from({ length: 14 }, (_, i) => i + 1);
    expect(set.pvs).toEqual([
      { name: 'xxx:m1.VAL', ok: true, value: 12.5, count: 1 },
      { name: 'xxx:m1.SCAN', ok: true, value: 3, count: 1 },
      { name: 'xxx:m1.DESC', ok: true, value: 'Motor 1, "north" µm', count: 1 },
      { name: 'xxx:m1.PREC', ok: true, value: 4, count: 1 },
      { name: 'xxx:userCalc1.CALC$', ok: true, value: 'A+B*2', count: 1 },
      { name: 'xxx:m1.OUT', ok: true, value: 'xxx:m2.VAL NPP NMS', count: 1 },
      { name: 'xxx:m1.EGU', ok: true, value: '', count: 1 },
      { name: 'xxx:m1.VELO', ok: true, value: 1.2345678901234, count: 1 },
      { name: 'xxx:gone.VAL', ok: false, error: "autosave could not read it when saving (it wrote 'Not Connected')" },
      { name: 'xxx:table', ok: true, value: [1, 2.5, -0.0003], count: 3 },
      { name: 'xxx:names', ok: true, value: ['alpha', 'be"ta', 'gamma delta'], count: 3 },
      { name: 'xxx:long', ok: true, value: long, count: 14 },
    ]);
  });

  it('writes a file autosave restores from, read back unchanged', () => {
    const text = writeAutosaveSav(set);
    const lines = text.split('\n');
    expect(lines[0]).toBe('# autosave R5.3\tAutomatically generated - DO NOT MODIFY - 241218-164205');
    expect(lines[1]).toBe('! 1 channel(s) not connected - or not all gets were successful');
    expect(lines).toContain('xxx:m1.DESC Motor 1, \\"north\\" \\xc2\\xb5m');
    expect(lines).toContain('#xxx:gone.VAL Not Connected');
    expect(lines).toContain('xxx:names @array@ { "alpha" "be\\"ta" "gamma delta" }');
    expect(lines.at(-2)).toBe('<END>');
    const again = parseAutosaveSav(text);
    expect(again.pvs).toEqual(set.pvs);
    expect(again.meta).toEqual(set.meta);
  });

  it('a file without <END> is incomplete; a bad line or an unclosed array is named', () => {
    expect(badArgument(() => parseAutosaveSav(fixture('truncated.sav'), 'truncated.sav'))).toBe(
      'truncated.sav line 4: no <END> line: the file is incomplete (autosave does not restore from it)',
    );
    expect(badArgument(() => parseAutosaveSav('', 'empty.sav'))).toBe(
      'empty.sav line 1: no <END> line: the file is incomplete (autosave does not restore from it)',
    );
    expect(badArgument(() => parseAutosaveSav('A:x 1\n%junk 2\n<END>\n', 'x.sav'))).toBe(
      "x.sav line 2: '%junk' is not a PV name (autosave's start with a letter or digit)",
    );
    expect(badArgument(() => parseAutosaveSav('A:x 1\nA:arr @array@ { "1" "2"\n', 'x.sav'))).toBe(
      "x.sav line 2: an @array@ value is not closed with '}'",
    );
  });
});

describe('autosave .req', () => {
  it('follows includes with their macros, the search path, defaults and ${} references', () => {
    const pvs = parseAutosaveReq(join(REQ, 'auto_settings.req'), { macros: { P: 'xxx:' }, searchPath: [join(REQ, 'lib')] });
    expect(pvs).toEqual([
      'xxx:m1.VAL',
      'xxx:m1.DESC',
      'xxx:m2.VAL',
      'xxx:m2.VELO',
      'xxx:userCalc1.CALC$',
      'iocStatus:heartbeat',
      'xxx:status.VAL',
    ]);
  });

  it('reads through a given readFile: nested macros, defaults, an absolute include', () => {
    const files: Record<string, string> = {
      '/ioc/top.req': '$(P)$(R=m)$(N)\nfile /shared/one.req P=$(P),Q=$(P)x:\n',
      '/shared/one.req': '# a comment $(UNDEFINED) is not expanded\n$(Q)a\n${Q}b junk after the name\n$(OFF=#)commented:out\n',
    };
    const readFile = (p: string): string => {
      const text = files[p];
      if (text === undefined) throw new Error(`ENOENT ${p}`);
      return text;
    };
    expect(parseAutosaveReq('/ioc/top.req', { macros: { P: 'i:', N: '$(X)', X: '7' }, readFile })).toEqual(['i:m7', 'i:x:a', 'i:x:b']);
    expect(badArgument(() => parseAutosaveReq('/ioc/top.req', { macros: { P: '$(Q)', Q: '$(P)' }, readFile }))).toBe(
      '/ioc/top.req line 1: macro P refers to itself (P > Q > P)',
    );
    expect(badArgument(() => parseAutosaveReq('/ioc/none.req', { readFile }))).toBe(
      '/ioc/none.req: cannot read the request file (ENOENT /ioc/none.req)',
    );
  });

  it('a missing include, an include cycle and an undefined macro name the file and line', () => {
    expect(badArgument(() => parseAutosaveReq(join(REQ, 'missing.req'), { searchPath: ['/nonexistent'] }))).toBe(
      `${join(REQ, 'missing.req')} line 3: included file 'nowhere.req' not found (looked for ${join(REQ, 'nowhere.req')}, /nonexistent/nowhere.req)`,
    );
    expect(badArgument(() => parseAutosaveReq(join(REQ, 'cycle_a.req')))).toBe(
      `${join(REQ, 'cycle_b.req')} line 2: include cycle: ${join(REQ, 'cycle_a.req')} > ${join(REQ, 'cycle_b.req')} > ${join(REQ, 'cycle_a.req')}`,
    );
    expect(badArgument(() => parseAutosaveReq(join(REQ, 'undefined.req'), { macros: { P: 'x:' } }))).toBe(
      `${join(REQ, 'undefined.req')} line 2: undefined macro Q`,
    );
    // An included file gets only its file line's macros, as in autosave.
    expect(badArgument(() => parseAutosaveReq(join(REQ, 'auto_settings.req'), { macros: { P: 'xxx:' } }))).toMatch(
      /calc_settings\.req line 2: included file 'common\.req' not found/,
    );
  });
});

describe('the format registry', () => {
  const id = (name: string, text: string): string | undefined => snapshotFormatOf(name, text)?.id;

  it('by name first', () => {
    expect(id('rf.csv', '')).toBe('phoebus-csv');
    expect(id('rf_20241218.snap', '')).toBe('psi-snap');
    expect(id('auto_settings.sav', '')).toBe('autosave-sav');
    expect(id('auto_settings.savB', '')).toBe('autosave-sav');
    expect(id('auto_settings.sav_241218-164205', '')).toBe('autosave-sav');
    expect(id('auto_settings.req', '')).toBeUndefined();
    expect(isAutosaveReq('auto_settings.req', '')).toBe(true);
  });

  it("then by content; this project's by its first line whatever the name", () => {
    expect(id('a.txt', fixture('auto_settings.sav'))).toBe('autosave-sav');
    expect(id('a.txt', '# save/restore V4.9\tAutomatically generated - DO NOT MODIFY - 060720-154526\n<END>\n')).toBe('autosave-sav');
    expect(id('a.txt', fixture('psi.snap'))).toBe('psi-snap');
    expect(id('a.txt', fixture('phoebus-snapshot.csv'))).toBe('phoebus-csv');
    expect(id('a', 'PV,READBACK,READ_ONLY\nA,,0\n')).toBe('phoebus-csv');
    expect(id('golden.csv', '{"format":"epicsperf-snapshot","version":1,"pvs":0}\n')).toBe('epicsperf');
    expect(id('a', '$(P)m1.VAL\nfile motor.req P=$(P)\n')).toBeUndefined();
    expect(isAutosaveReq('a', '$(P)m1.VAL\nfile motor.req P=$(P)\n')).toBe(true);
    expect(id('a.json', '{"pvs": []}')).toBeUndefined();
    expect(isAutosaveReq('a.json', '{"pvs": []}')).toBe(false);
  });

  it('a name picks the format written; every format reads back what it writes and knows its own text', () => {
    expect(['x.csv', 'x.SNAP', 'x.sav', 'x.snapshot', 'x'].map((n) => snapshotFormatForName(n).id)).toEqual([
      'phoebus-csv',
      'psi-snap',
      'autosave-sav',
      'epicsperf',
      'epicsperf',
    ]);
    const set: SaveSet = {
      meta: { time: '2026-11-27T10:00:00.000Z', host: 'h', protocol: 'ca' },
      pvs: [
        { name: 'A:DOUBLE', ok: true, value: 1.5, type: 'double', count: 1 },
        { name: 'A:TEXT', ok: true, value: 'some text', type: 'string', count: 1 },
        { name: 'A:ARRAY', ok: true, value: [1, 2, 3], type: 'double', count: 3 },
      ],
    };
    for (const f of SNAPSHOT_FORMATS) {
      const text = f.write(set);
      expect(f.sniff(text), f.id).toBe(true);
      expect(snapshotFormatOf('file', text)?.id, f.id).toBe(f.id);
      expect(
        f.parse(text).pvs.map((p) => p.name),
        f.id,
      ).toEqual(set.pvs.map((p) => p.name));
    }
  });
});
