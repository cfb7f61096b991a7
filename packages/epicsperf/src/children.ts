// Every process epicsperf starts dies with it: children registered here are killed when this
// process exits, however it exits (the children also watch their stdin for EOF).
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The live children, each with whether its descendants go with it. */
const live = new Map<ChildProcess, boolean>();
let hooked = false;

/** A process's descendants, from /proc (the children of each of its threads, and theirs). */
function descendants(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const t of tasks) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8');
    } catch {
      // the thread has ended
    }
    for (const c of text.split(/\s+/).filter(Boolean).map(Number)) out.push(c, ...descendants(c));
  }
  return out;
}

/** Kill a child and every process under it (a build tool and the compilers it started). */
export function killTree(child: ChildProcess): void {
  const pids = child.pid === undefined ? [] : descendants(child.pid);
  child.kill('SIGKILL');
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/**
 * Kill `child` when this process exits, unless it has exited first; with `tree`, every process
 * under it too (a build tool and the compilers it starts).
 */
export function killOnExit(child: ChildProcess, opts: { tree?: boolean } = {}): void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const [c, tree] of live) {
        if (tree) killTree(c);
        else c.kill('SIGKILL');
      }
    });
  }
  live.set(child, opts.tree === true);
  child.once('exit', () => live.delete(child));
}
