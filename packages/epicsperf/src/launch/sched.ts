// Every runner runs in the same scheduling class. As root, libca (and so every client built on
// it) gives its receive threads real-time priority, which no pure-Python or pure-JS client can
// do; in ordinary use clients run unprivileged. So when we are root, runners start without the
// capability to raise their priority (util-linux setpriv), and libca falls back to normal threads.
import { execFileSync } from 'node:child_process';

let prefix: string[] | undefined;

/** argv to put before a runner's command, and a note of what it does (for the results). */
export function schedulingPrefix(): { argv: string[]; note: string } {
  if (prefix === undefined) {
    prefix = [];
    if (process.getuid?.() === 0) {
      try {
        execFileSync('setpriv', ['--bounding-set', '-sys_nice', '--', 'true'], { stdio: 'ignore' });
        prefix = ['setpriv', '--bounding-set', '-sys_nice', '--'];
      } catch {
        prefix = [];
      }
    }
  }
  const note = prefix.length
    ? 'runners without CAP_SYS_NICE: no client thread runs with real-time priority'
    : process.getuid?.() === 0
      ? 'root without setpriv: libca-based clients may run real-time threads'
      : 'unprivileged: no client thread runs with real-time priority';
  return { argv: prefix, note };
}
