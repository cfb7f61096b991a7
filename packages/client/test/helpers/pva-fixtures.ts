// Loads the captured PV Access exchanges (fixtures/pva) and replays them through the decoder
// with the per-direction type caches and the operation types a client would keep.
import { readFileSync } from 'node:fs';
import {
  decodeMessage,
  TypeCache,
  type Decoded,
  type PvaHeader,
  readHeader,
  emptyHeader,
  type StructureDesc,
} from '../../src/pva/index.js';

export interface FixtureMessage {
  dir: 'c2s' | 's2c';
  bytes: Uint8Array;
}

export const FIXTURES = ['get', 'put', 'monitor', 'get-request', 'getfield-errors', 'udp-search'] as const;

export function loadFixture(name: string): FixtureMessage[] {
  const text = readFileSync(new URL(`../fixtures/pva/${name}.txt`, import.meta.url), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [dir, hex] = line.split(' ');
      return { dir: dir as 'c2s' | 's2c', bytes: new Uint8Array(Buffer.from(hex!, 'hex')) };
    });
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

export function headerOf(b: Uint8Array): PvaHeader {
  const h = emptyHeader();
  if (!readHeader(b, 0, h)) throw new Error('bad magic');
  return h;
}

/** A decoder with the state one side of a connection keeps. */
export class Replay {
  readonly serverTypes = new TypeCache();
  readonly clientTypes = new TypeCache();
  readonly ops = new Map<number, StructureDesc>();

  decode(b: Uint8Array): Decoded {
    const h = headerOf(b);
    const fromServer = (h.flags & 0x40) !== 0;
    const m = decodeMessage(h, b.subarray(8, 8 + (h.flags & 1 ? 0 : h.payloadSize)), {
      types: fromServer ? this.serverTypes : this.clientTypes,
      operation: (id) => {
        const t = this.ops.get(id);
        return t ? { type: t } : undefined;
      },
    });
    if (m.type === 'OpInitResponse' && m.valueType?.kind === 'structure') this.ops.set(m.requestId, m.valueType);
    return m;
  }
}

export function replay(name: string): { msg: FixtureMessage; decoded: Decoded }[] {
  const r = new Replay();
  return loadFixture(name).map((msg) => ({ msg, decoded: r.decode(msg.bytes) }));
}
