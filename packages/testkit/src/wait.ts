// Polling for a condition, for tests of every tier (it imports nothing, so a unit test that
// needs it pulls in no Python helper).

/** Wait until `pred` holds, polling every 20 ms, or fail after `ms`. */
export async function waitFor(pred: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
