// The snapshot file formats, as one registry: this project's, Phoebus save-and-restore CSV, PSI
// snapshot .snap and EPICS autosave .sav, each with its names, how its text is recognised, its
// parser and its writer; autosave's .req request files are PV lists, recognised beside them.
// Pure functions of text, except a .req file's includes.
import type { SaveSet } from '../types.js';
import { isNativeSnapshot, parseSnapshot, writeSnapshot } from '../native.js';
import { parseAutosaveSav, writeAutosaveSav } from './autosave.js';
import { splitLines } from './common.js';
import { parsePhoebusCsv, writePhoebusCsv } from './phoebus.js';
import { parsePsiSnap, writePsiSnap } from './psi.js';

export { parsePhoebusCsv, writePhoebusCsv, type PhoebusCsvOptions } from './phoebus.js';
export { parsePsiSnap, writePsiSnap } from './psi.js';
export { parseAutosaveSav, writeAutosaveSav, parseAutosaveReq, type AutosaveReqOptions } from './autosave.js';

export type SnapshotFormatId = 'epicsperf' | 'phoebus-csv' | 'psi-snap' | 'autosave-sav';

/** One snapshot file format. */
export interface SnapshotFormat {
  id: SnapshotFormatId;
  /** How a person names it ("PSI .snap"). */
  title: string;
  /** The file names that are this format (a name matching no format's is this project's when written). */
  names?: RegExp;
  /** Is this text in this format (by its first lines)? */
  sniff(text: string): boolean;
  /** The save set of a file's text; `source` names it in errors (a BadArgumentError naming the line). */
  parse(text: string, source?: string): SaveSet;
  write(set: SaveSet): string;
}

/** The formats, in the order they are tried on a file's content. */
export const SNAPSHOT_FORMATS: readonly SnapshotFormat[] = [
  { id: 'epicsperf', title: "this project's", sniff: isNativeSnapshot, parse: parseSnapshot, write: writeSnapshot },
  {
    id: 'autosave-sav',
    title: 'autosave .sav',
    // .sav and autosave's backups: .savB, .sav0-.savN, .sav_YYMMDD-HHMMSS, .sav.bu
    names: /\.sav(?:b|\d+|_\d{6}-\d{6}|\.bu)?$/i,
    sniff: (text) => {
      const first = splitLines(text).find((l) => l.trim() !== '') ?? '';
      return /^#\s*(?:save\/restore|autosave)\b/.test(first) || first.includes('Automatically generated - DO NOT MODIFY');
    },
    parse: parseAutosaveSav,
    write: writeAutosaveSav,
  },
  {
    id: 'psi-snap',
    title: 'PSI .snap',
    names: /\.snap$/i,
    sniff: (text) => /^#\s*\{/.test(splitLines(text).find((l) => l.trim() !== '') ?? ''),
    parse: parsePsiSnap,
    write: writePsiSnap,
  },
  {
    id: 'phoebus-csv',
    title: 'Phoebus CSV',
    names: /\.csv$/i,
    sniff: (text) => {
      const header = splitLines(text).find((l) => l.trim() !== '' && !l.startsWith('#'));
      const columns = header?.split(',').map((c) => c.trim()) ?? [];
      return (columns[0] === 'PV' && columns.length > 1) || (columns.includes('PV') && columns.includes('READBACK'));
    },
    parse: parsePhoebusCsv,
    write: (set) => writePhoebusCsv(set),
  },
];

const byId = (id: SnapshotFormatId): SnapshotFormat => SNAPSHOT_FORMATS.find((f) => f.id === id)!;

/** An autosave request file (a PV list with includes and macros), by its name or its `file` lines. */
export function isAutosaveReq(fileName: string, text: string): boolean {
  return (
    /\.req$/i.test(fileName) || (!snapshotFormatOf(fileName, text) && splitLines(text).some((l) => /^\s*file\s+"?[^\s"]+\.req\b/.test(l)))
  );
}

/**
 * The format of a saved snapshot: this project's by its first line, then by the file's name,
 * then by its content; undefined when none fits (or the name is a .req file's).
 */
export function snapshotFormatOf(fileName: string, text: string): SnapshotFormat | undefined {
  if (isNativeSnapshot(text)) return byId('epicsperf');
  if (/\.req$/i.test(fileName)) return undefined;
  return SNAPSHOT_FORMATS.find((f) => f.names?.test(fileName)) ?? SNAPSHOT_FORMATS.find((f) => f.sniff(text));
}

/** The format a file written under this name takes: the one whose names match, else this project's. */
export function snapshotFormatForName(fileName: string): SnapshotFormat {
  return SNAPSHOT_FORMATS.find((f) => f.names?.test(fileName)) ?? byId('epicsperf');
}
