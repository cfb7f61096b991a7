// The tests' side of the `mark`/`report` line protocol of benchmarks/reboot-client.mjs and
// reboot-client.py: a long-running client monitoring counters, asked how many have updated since
// the last mark, and when the last of them did.
import type { ChildProcess } from 'node:child_process';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Poll `get` every 100 ms until it gives a value; throws after `ms`. */
export async function waitFor<T>(what: string, ms: number, get: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not in ${ms / 1000} s`);
    await sleep(100);
  }
}

/** A long-running process speaking the `mark`/`report` line protocol of benchmarks/reboot-client.*. */
export class Client {
  stderr = '';
  private lines: string[] = [];
  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (buf + d.toString()).split('\n');
      buf = parts.pop()!;
      this.lines.push(...parts);
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }
  /** The next line it prints. */
  next(ms = 20_000): Promise<string> {
    return waitFor(`${this.name}: a line (stderr: ${this.stderr.slice(-300)})`, ms, () => this.lines.shift());
  }
  async ask(cmd: string): Promise<string> {
    this.child.stdin!.write(cmd + '\n');
    return this.next();
  }
  async report(): Promise<{ resumed: number; last: number | null }> {
    return JSON.parse(await this.ask('report')) as { resumed: number; last: number | null };
  }
}
