// The snapshot files other tools write, read into a save set and written back from one: Phoebus
// save-and-restore CSV, PSI snapshot .snap, EPICS autosave .sav (and its .req request files as PV
// lists); and which of them a file is. Pure functions of text, except a .req file's includes.
export { parsePhoebusCsv, writePhoebusCsv, type PhoebusCsvOptions } from './phoebus.js';
export { parsePsiSnap, writePsiSnap } from './psi.js';
export { parseAutosaveSav, writeAutosaveSav, parseAutosaveReq, type AutosaveReqOptions } from './autosave.js';

export type SnapshotFormat = 'phoebus-csv' | 'psi-snap' | 'autosave-sav' | 'autosave-req';

/**
 * Which of these formats a file is: by its extension first (.csv, .snap, .sav and autosave's
 * backups .savB, .sav0-.savN, .sav_YYMMDD-HHMMSS, .sav.bu; .req), then by its content (an
 * autosave header, a first line of '#' and JSON, a CSV header with a PV column, `file x.req`
 * lines). Undefined when none fits.
 */
export function detectFormat(fileName: string, text: string): SnapshotFormat | undefined {
  const name = fileName.toLowerCase();
  if (name.endsWith('.csv')) return 'phoebus-csv';
  if (name.endsWith('.snap')) return 'psi-snap';
  if (/\.sav(?:b|\d+|_\d{6}-\d{6}|\.bu)?$/.test(name)) return 'autosave-sav';
  if (name.endsWith('.req')) return 'autosave-req';
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const first = lines.find((l) => l.trim() !== '') ?? '';
  if (/^#\s*(?:save\/restore|autosave)\b/.test(first) || first.includes('Automatically generated - DO NOT MODIFY')) return 'autosave-sav';
  if (/^#\s*\{/.test(first)) return 'psi-snap';
  const header = lines.find((l) => l.trim() !== '' && !l.startsWith('#'));
  if (header !== undefined) {
    const columns = header.split(',').map((c) => c.trim());
    if (columns[0] === 'PV' && columns.length > 1) return 'phoebus-csv';
    if (columns.includes('PV') && columns.includes('READBACK')) return 'phoebus-csv';
  }
  if (lines.some((l) => /^\s*file\s+"?[^\s"]+\.req\b/.test(l))) return 'autosave-req';
  return undefined;
}
