// A lock between processes (and between calls of one process) on something built once in
// EPICSPERF_HOME: a folder made with mkdir, holding the owner's pid; stale when its owner is gone.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The locks this process holds, by token: a lock of this pid with another token is a dead process's. */
const held = new Set<string>();

/** Whether a process of this pid runs (one of another user counts). */
function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The owner a lock folder names, or undefined when it names none (yet). */
function owner(lock: string): { pid: number; token: string } | undefined {
  try {
    const [pid, token] = readFileSync(join(lock, 'pid'), 'utf8').trim().split(/\s+/);
    return { pid: Number(pid), token: token ?? '' };
  } catch {
    return undefined;
  }
}

function isStale(lock: string): boolean {
  const o = owner(lock);
  if (o) return o.pid === process.pid ? !held.has(o.token) : !pidAlive(o.pid);
  // No pid yet: its owner is between mkdir and writing it, unless that was over 30 minutes ago.
  try {
    return Date.now() - statSync(lock).mtimeMs > 30 * 60_000;
  } catch {
    return false;
  }
}

/**
 * Take the lock folder `lock` (its parent must exist), waiting while another process or another
 * call of this one holds it; `onWait` is called once, with the holder's pid, when it has to wait.
 * Resolves to the function that releases it.
 */
export async function acquireLock(lock: string, onWait: (pid: number | undefined) => void, pollMs = 500): Promise<() => void> {
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      const token = randomBytes(8).toString('hex');
      held.add(token);
      writeFileSync(join(lock, 'pid'), `${process.pid} ${token}\n`);
      return () => {
        held.delete(token);
        if (owner(lock)?.token === token) rmSync(lock, { recursive: true, force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (isStale(lock)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) {
      onWait(owner(lock)?.pid);
      told = true;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
