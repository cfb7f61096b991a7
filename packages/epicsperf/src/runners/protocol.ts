// The runner side of the line protocol (docs/runners.md) for runners written in Node, the bench's
// and the capture's: events and payloads on fd 3, the error that ends a runner, commands on stdin.
import { readFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** Write one event on fd 3, followed by its payload. */
export function emit(event: Record<string, unknown>, payload?: Uint8Array): void {
  const e = payload ? { ...event, bytes: payload.byteLength } : event;
  writeAll(Buffer.from(JSON.stringify(e) + '\n'));
  if (payload) writeAll(payload);
}

function writeAll(buf: Uint8Array): void {
  let off = 0;
  while (off < buf.byteLength) {
    try {
      off += writeSync(3, buf, off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      throw err;
    }
  }
}

/** Report an error on one line (with `fields`, e.g. `input: true`) and exit with `code`. */
export function fail(message: string, code = 1, fields: Record<string, unknown> = {}): never {
  try {
    emit({ ev: 'error', message: message.replace(/\s+/g, ' '), ...fields });
  } finally {
    process.exit(code);
  }
}

/** Commands from stdin, one per line; EOF (the orchestrator is gone) exits at once. */
export function onCommand(handler: (cmd: string) => void): void {
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => handler(line.trim()));
  rl.on('close', () => process.exit(0));
}

/** The version of this package (and of epics-client, released with it), which a Node runner's `ready` names. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
