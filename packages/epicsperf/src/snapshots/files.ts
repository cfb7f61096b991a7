// Snapshot files on disk: read in whichever format they are (this project's, Phoebus CSV, PSI
// .snap, autosave .sav), written in the one their name says, and the names a snapshot reads
// (a PV list, an autosave .req request file, or the PVs of a saved snapshot). Written whole or
// not at all (../atomic.ts).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  detectFormat, isNativeSnapshot, parseAutosaveReq, parseAutosaveSav, parsePhoebusCsv, parsePsiSnap, parseSnapshot, writePhoebusCsv,
  writePsiSnap, writeSnapshot, writeAutosaveSav, type SaveSet,
} from 'epics-client/saveset';
import { writeAtomic } from '../atomic.js';
import { SnapshotFileError } from '../errors.js';
import { parsePvList } from '../pvlist.js';

export type SnapshotFormat = 'epicsperf' | 'phoebus-csv' | 'psi-snap' | 'autosave-sav';

function readText(path: string, what: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new SnapshotFileError(`cannot read ${what} ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.code ?? e.message}`);
  }
}

/** A library parse error (BadArgumentError) as this tool's input error. */
function asInput<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof Error && (e as { code?: string }).code === 'ERR_EPICS_BAD_ARGUMENT') throw new SnapshotFileError(e.message);
    throw e;
  }
}

/** The format of a snapshot file's text (this project's by its first line, the others by name, then content). */
function formatOf(path: string, text: string): SnapshotFormat | 'autosave-req' | undefined {
  if (isNativeSnapshot(text)) return 'epicsperf';
  return detectFormat(basename(path), text);
}

/** Read a saved snapshot in any format it can be. */
export function readSaveSet(path: string): { set: SaveSet; format: SnapshotFormat } {
  return parseSaveSet(path, readText(path, 'snapshot'));
}

/** A saved snapshot from the text of the file at `path`. */
function parseSaveSet(path: string, text: string): { set: SaveSet; format: SnapshotFormat } {
  const source = basename(path);
  const format = formatOf(path, text);
  return asInput(() => {
    switch (format) {
      case 'epicsperf': return { set: parseSnapshot(text, source), format };
      case 'phoebus-csv': return { set: parsePhoebusCsv(text, source), format };
      case 'psi-snap': return { set: parsePsiSnap(text, source), format };
      case 'autosave-sav': return { set: parseAutosaveSav(text, source), format };
      case 'autosave-req': throw new SnapshotFileError(`${path} is an autosave request file (a list of PVs), not a saved snapshot`);
      default: throw new SnapshotFileError(`${path}: not a snapshot file (this project's, Phoebus CSV, PSI .snap or autosave .sav)`);
    }
  });
}

/** The names a snapshot reads from `path`: a PV list, an autosave .req file (with macros), or a saved snapshot's PVs. */
export function readNames(path: string, macros: Record<string, string> = {}): string[] {
  if (path === '-') return parsePvList(readText(path, 'PV list'), 'stdin');
  const text = readText(path, 'PV list');
  const format = formatOf(path, text);
  if (format === 'autosave-req') return asInput(() => parseAutosaveReq(path, { macros }));
  if (format === undefined) return parsePvList(text, path);
  return parseSaveSet(path, text).set.pvs.map((p) => p.name);
}

/** The format a file name asks for: .csv Phoebus, .snap PSI, .sav autosave, anything else this project's. */
export function formatForName(path: string): SnapshotFormat {
  if (/\.csv$/i.test(path)) return 'phoebus-csv';
  if (/\.snap$/i.test(path)) return 'psi-snap';
  if (/\.sav$/i.test(path)) return 'autosave-sav';
  return 'epicsperf';
}

const WRITERS: Record<SnapshotFormat, (set: SaveSet) => string> = {
  epicsperf: writeSnapshot, 'phoebus-csv': writePhoebusCsv, 'psi-snap': writePsiSnap, 'autosave-sav': writeAutosaveSav,
};

/** Write a save set in the format its name asks for, whole or not at all. */
export function writeSaveSet(path: string, set: SaveSet): SnapshotFormat {
  const format = formatForName(path);
  const text = asInput(() => WRITERS[format](set));
  try {
    writeAtomic(path, text);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new SnapshotFileError(`cannot write ${path}: ${e.code ?? e.message}`);
  }
  return format;
}
