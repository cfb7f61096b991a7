// Snapshot files on disk: read in whichever format they are (this project's, Phoebus CSV, PSI
// .snap, autosave .sav), written in the one their name says, and the names a snapshot reads
// (a PV list, an autosave .req request file, or the PVs of a saved snapshot). Written whole or
// not at all (../atomic.ts).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  isAutosaveReq,
  parseAutosaveReq,
  SNAPSHOT_FORMATS,
  snapshotFormatForName,
  snapshotFormatOf,
  type SaveSet,
  type SnapshotFormatId,
} from 'epics-client/saveset';
import { writeAtomic } from './atomic.js';
import { SnapshotFileError } from './errors.js';
import { parsePvList } from './pvlist.js';

function readText(path: string, what: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new SnapshotFileError(`cannot read ${what} ${path}: ${e.code === 'ENOENT' ? 'no such file' : (e.code ?? e.message)}`);
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

/** Read a saved snapshot in any format it can be. */
export function readSaveSet(path: string): { set: SaveSet; format: SnapshotFormatId } {
  return parseSaveSet(path, readText(path, 'snapshot'));
}

/** A saved snapshot from the text of the file at `path`. */
function parseSaveSet(path: string, text: string): { set: SaveSet; format: SnapshotFormatId } {
  const name = basename(path);
  const format = snapshotFormatOf(name, text);
  if (!format) {
    if (isAutosaveReq(name, text)) throw new SnapshotFileError(`${path} is an autosave request file (a list of PVs), not a saved snapshot`);
    throw new SnapshotFileError(`${path}: not a snapshot file (${SNAPSHOT_FORMATS.map((f) => f.title).join(', ')})`);
  }
  return { set: asInput(() => format.parse(text, name)), format: format.id };
}

/** The names a snapshot reads from `path`: a PV list, an autosave .req file (with macros), or a saved snapshot's PVs. */
export function readNames(path: string, macros: Record<string, string> = {}): string[] {
  if (path === '-') return parsePvList(readText(path, 'PV list'), 'stdin');
  const text = readText(path, 'PV list');
  if (isAutosaveReq(basename(path), text)) return asInput(() => parseAutosaveReq(path, { macros }));
  if (!snapshotFormatOf(basename(path), text)) return parsePvList(text, path);
  return parseSaveSet(path, text).set.pvs.map((p) => p.name);
}

/** Write a save set in the format its name asks for, whole or not at all. */
export function writeSaveSet(path: string, set: SaveSet): SnapshotFormatId {
  const format = snapshotFormatForName(basename(path));
  const text = asInput(() => format.write(set));
  try {
    writeAtomic(path, text);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new SnapshotFileError(`cannot write ${path}: ${e.code ?? e.message}`);
  }
  return format.id;
}
