// Writing a file whole or not at all: through a temporary file beside it, synced to disk, then
// renamed over the target. A stop, a kill or a full disk leaves the old file (or none), never half
// of the new one.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w', 0o644);
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
}
