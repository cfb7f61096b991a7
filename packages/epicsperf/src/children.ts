// Every process epicsperf starts dies with it: children registered here are killed when this
// process exits, however it exits (the children also watch their stdin for EOF).
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let hooked = false;

/** Kill `child` when this process exits, unless it has exited first. */
export function killOnExit(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}
