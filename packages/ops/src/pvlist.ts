// The PV-list format: one name per line; blank lines and # comments ignored; `-` reads stdin.
import { readFileSync } from 'node:fs';

import { PvListError } from './errors.js';

/** Parse PV-list text. Throws PvListError (one line) on a bad name, a duplicate, or no names. */
export function parsePvList(text: string, source = 'PV list'): string[] {
  const names: string[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    if (/\s/.test(line)) throw new PvListError(`${source} line ${i + 1}: one PV name per line, got "${line}"`);
    const first = seen.get(line);
    if (first !== undefined) throw new PvListError(`${source} line ${i + 1}: duplicate PV name ${line} (first on line ${first})`);
    seen.set(line, i + 1);
    names.push(line);
  });
  if (names.length === 0) throw new PvListError(`${source} has no PV names`);
  return names;
}

/** Read a PV-list file (`-` = stdin). */
export function readPvList(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new PvListError(`cannot read PV list ${path}: ${e.code === 'ENOENT' ? 'no such file' : (e.code ?? e.message)}`);
  }
  return parsePvList(text, path === '-' ? 'stdin' : path);
}
