// Every process epicsperf starts dies with it: children registered here are killed when this
// process exits, however it exits (the children also watch their stdin for EOF).
import type { ChildProcess } from 'node:child_process';

/** The live children, each with whether its whole process group goes with it. */
const live = new Map<ChildProcess, boolean>();
let hooked = false;

/**
 * Kill `child` when this process exits, unless it has exited first; with `group`, its whole
 * process group (a child spawned `detached` leads one: a build tool and the compilers it starts).
 */
export function killOnExit(child: ChildProcess, opts: { group?: boolean } = {}): void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const [c, group] of live) {
        try {
          if (group && c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
          else c.kill('SIGKILL');
        } catch {
          // gone already
        }
      }
    });
  }
  live.set(child, opts.group === true);
  child.once('exit', () => live.delete(child));
}
