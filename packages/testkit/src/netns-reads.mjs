// What the client scripts run on rig hosts share: a read as {value} or {error}, and the events
// and values of a monitor until it has `n` values (or the time is up).

/** A read's value, or its error code and message. */
export async function settle(p) {
  try {
    return { value: (await p).value };
  } catch (err) {
    return { error: `${err.code}: ${err.message}` };
  }
}

/** Events and values the monitor of `name` delivered until it has `n` values, or `timeoutMs` passed. */
export function collect(ctx, name, n, timeoutMs) {
  return new Promise((resolve) => {
    const events = [];
    const values = [];
    let m;
    const done = () => {
      clearTimeout(timer);
      m?.close();
      resolve({ events, values });
    };
    const timer = setTimeout(done, timeoutMs);
    m = ctx.monitor(name, {}, (e) => {
      events.push(e.kind);
      if (e.kind !== 'update') return;
      values.push(Number(e.value));
      if (values.length >= n) done();
    });
  });
}
