// Proves a server is serving: a real client (this project's) reads one PV from it.
import { Context } from 'epics-client';

/** Resolve once `name` has been read over `protocol` with the given client environment. */
export async function probe(protocol: 'CA' | 'PVA', env: Record<string, string>, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const ctx = new Context({ env });
    try {
      await ctx.get(protocol === 'PVA' ? `pva://${name}` : name, { timeout: Math.max(100, Math.min(2000, deadline - Date.now())) });
      return;
    } catch (err) {
      last = (err as Error).message;
    } finally {
      await ctx.close();
    }
  }
  throw new Error(`no ${protocol} client could read ${name}: ${last}`);
}
