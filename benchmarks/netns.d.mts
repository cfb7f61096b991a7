// Types of benchmarks/netns.mjs, for the tests' rig (packages/testkit/src/netns.ts) built on it.
import type { ChildProcess, StdioOptions } from 'node:child_process';

export interface NetHost {
  readonly ns: string;
  readonly address: string;
  /** The host's /24, as "198.18.1" (its broadcast address is that and ".255"). */
  readonly subnet: string;
  /** On a routed net, the side of the router the host is on. */
  readonly side?: 'left' | 'right';
}

export class Net {
  constructor(shape: number | { left: number; right: number }, prefix?: string);
  readonly hosts: NetHost[];
  readonly router: NetHost | undefined;
  spawn(host: NetHost, cmd: string, args: string[], env: Record<string, string>, stdio?: StdioOptions): ChildProcess;
  close(): void;
}

/** The process environment without EPICS_*: a host starts from the EPICS defaults. */
export function cleanEnv(extra?: Record<string, string>): Record<string, string>;

/** Remove the namespaces of `prefix` whose process is gone, and what still runs in them. */
export function removeStale(prefix: string): void;
