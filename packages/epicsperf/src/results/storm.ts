// The connect storm's result shapes (`bench storm`): one client asks a fresh server for many
// channels at once and reads each once; per server and protocol, how many it answered, how soon
// the last came, and what the storm cost the server (CPU, memory).
import type { Integer } from 'epics-ops';
import type { StealPercent } from './monitor.js';

export interface StormWorkload {
  /** The servers asked for, in order (`ioc`: the built-in IOC's records). */
  servers: string[];
  /** Channels (the server's counters, still) the client asks for at once. */
  channels: Integer;
  /** Each channel's timeout, ms. */
  timeoutMs: Integer;
}

/** One server and protocol: the client's snapshot of every channel. */
export interface StormRun {
  server: string;
  protocol: 'CA' | 'PVA';
  client: string;
  /** The server's library version. */
  version?: string;
  /** The server could not run here: why (error). */
  unsupported?: boolean;
  /** Channels answered (connected and read) within their timeout. */
  answered: Integer;
  /** Answers whose value is not the counter's (1). */
  wrong: Integer;
  /** From the client's start to its last answer or timeout, ms. */
  wallMs?: number;
  /** The client's process: CPU seconds over the storm, peak RSS. */
  clientCpuS?: number;
  clientPeakRssMb?: number;
  /** The server's process over the storm (the gateway's, for a gateway): CPU seconds, peak RSS since it started. */
  serverCpuS?: number;
  serverPeakRssMb?: number;
  /** Every channel answered, every value right. */
  ok: boolean;
  error?: string;
}

export interface StormResults {
  workload: StormWorkload;
  runs: StormRun[];
  stealPercent?: StealPercent | undefined;
}
