// One listener on an AbortSignal however many operations watch it. A caller may pass one signal
// to thousands of calls (a restore of 10,000 PVs does), and Node warns past ten listeners on one
// signal; here every watcher of a signal shares a single listener, removed with the last watcher.

interface Watchers {
  readonly fns: Set<() => void>;
  readonly listener: () => void;
}

const bySignal = new WeakMap<AbortSignal, Watchers>();

/** Call `fn` once when `signal` aborts; the returned function stops watching. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let w = bySignal.get(signal);
  if (!w) {
    const fns = new Set<() => void>();
    const listener = (): void => {
      bySignal.delete(signal);
      for (const f of [...fns]) f();
      fns.clear();
    };
    w = { fns, listener };
    bySignal.set(signal, w);
    signal.addEventListener('abort', listener, { once: true });
  }
  const mine = w;
  mine.fns.add(fn);
  return () => {
    if (!mine.fns.delete(fn) || mine.fns.size > 0 || bySignal.get(signal) !== mine) return;
    bySignal.delete(signal);
    signal.removeEventListener('abort', mine.listener);
  };
}
