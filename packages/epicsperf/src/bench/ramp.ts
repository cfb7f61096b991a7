// The stepping shared by the workloads that raise the load until a client gives way (capture,
// headroom): each step opened once for the clients still climbing, each client run in turn, and a
// client that does not hold a step drops out of the rest of its lane (the progress count shrinks).

/** One open load step: runs a client at it, and ends it (stops its IOC). */
export interface OpenStep<Client, R> {
  run(client: Client): Promise<R>;
  close(): Promise<void>;
}

export interface ClimbOptions<Step, Client, R> {
  /** The steps, lowest load first. */
  steps: readonly Step[];
  clients: readonly Client[];
  /** Steps of one lane share a drop-out (capture: counters, then the waveform); default one lane. */
  lane?: (step: Step) => string;
  /** Prepares a step (only when some client still climbs to it). */
  open(step: Step): Promise<OpenStep<Client, R>>;
  /** Whether a client held the step (and climbs on). */
  held(r: R): boolean;
  /** `n` (step, client) runs counted up front will not run. */
  onSkip?: (n: number) => void;
}

/** Every (step, client) run made, in order. */
export async function climb<Step, Client, R>(o: ClimbOptions<Step, Client, R>): Promise<R[]> {
  const lane = o.lane ?? (() => '');
  const out = new Map<Client, Set<string>>(o.clients.map((c) => [c, new Set()]));
  const results: R[] = [];
  for (const [i, step] of o.steps.entries()) {
    const clients = o.clients.filter((c) => !out.get(c)!.has(lane(step)));
    if (clients.length === 0) continue;
    const open = await o.open(step);
    try {
      for (const client of clients) {
        const r = await open.run(client);
        results.push(r);
        if (!o.held(r)) {
          out.get(client)!.add(lane(step));
          const n = o.steps.slice(i + 1).filter((x) => lane(x) === lane(step)).length;
          if (n > 0) o.onSkip?.(n);
        }
      }
    } finally {
      await open.close();
    }
  }
  return results;
}
