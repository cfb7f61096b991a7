// Names files handed to runners (one PV per line), in a private temporary directory.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function writeNamesFile(names: readonly string[]): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'epicsperf-'));
  const path = join(dir, 'names.txt');
  writeFileSync(path, names.join('\n') + '\n');
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
