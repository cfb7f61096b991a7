// epics-ops's errors: one base class with a stable ERR_EPICS_OPS_* code, each the user's input at
// fault; a bad PV list and an unreadable snapshot file throw theirs.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpsError, PvListError, SnapshotFileError, UsageError } from '../../src/errors.js';
import { parsePvList } from '../../src/pvlist.js';
import { readSaveSet } from '../../src/files.js';

describe("epics-ops's errors", () => {
  it('each has its code and name', () => {
    for (const [err, code] of [
      [new UsageError('u'), 'ERR_EPICS_OPS_USAGE'],
      [new PvListError('p'), 'ERR_EPICS_OPS_PV_LIST'],
      [new SnapshotFileError('s'), 'ERR_EPICS_OPS_SNAPSHOT_FILE'],
    ] as const) {
      expect(err).toBeInstanceOf(OpsError);
      expect(err.code).toBe(code);
      expect(err.name).toBe(err.constructor.name);
    }
  });

  it('a bad PV list throws a PvListError, a file of no snapshot format a SnapshotFileError', () => {
    expect(() => parsePvList('A\nA\n')).toThrow(PvListError);
    const dir = mkdtempSync(join(tmpdir(), 'epics-ops-'));
    writeFileSync(join(dir, 'x.dat'), 'not a snapshot\n');
    expect(() => readSaveSet(join(dir, 'x.dat'))).toThrow(SnapshotFileError);
    expect(() => readSaveSet(join(dir, 'none.snap'))).toThrow(/no such file/);
  });
});
