// The monitor iterator's bounded queue: the oldest value update goes when it is full; connection,
// disconnection and error events never do.
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../src/client/queue.js';

type Ev = { kind: 'update'; n: number } | { kind: 'connected' | 'disconnected' | 'error'; n: number };
const up = (n: number): Ev => ({ kind: 'update', n });
const drain = (q: EventQueue<Ev>): string[] => {
  const out: string[] = [];
  for (let ev = q.shift(); ev; ev = q.shift()) out.push(ev.kind === 'update' ? `u${ev.n}` : `${ev.kind}${ev.n}`);
  return out;
};

describe('EventQueue', () => {
  it('keeps the newest updates up to its capacity and counts the dropped ones', () => {
    const q = new EventQueue<Ev>(3);
    for (let i = 1; i <= 5; i++) q.push(up(i));
    expect(q.overruns).toBe(2);
    expect(drain(q)).toEqual(['u3', 'u4', 'u5']);
  });

  it('drops the oldest value, never a connection event queued before it', () => {
    const q = new EventQueue<Ev>(3);
    q.push({ kind: 'connected', n: 0 });
    q.push(up(1));
    q.push(up(2));
    q.push({ kind: 'disconnected', n: 3 });
    q.push({ kind: 'connected', n: 4 });
    q.push(up(5));
    expect(drain(q)).toEqual(['connected0', 'disconnected3', 'connected4', 'u5']);
    expect(q.overruns).toBe(2);
  });

  it('an incoming connection or error event makes room by dropping a value', () => {
    const q = new EventQueue<Ev>(2);
    q.push(up(1));
    q.push(up(2));
    q.push({ kind: 'error', n: 3 });
    expect(drain(q)).toEqual(['u2', 'error3']);
    expect(q.overruns).toBe(1);
  });

  it('holding only connection events, it grows past its capacity rather than lose one', () => {
    const q = new EventQueue<Ev>(2);
    for (let i = 0; i < 4; i++) q.push({ kind: i % 2 ? 'disconnected' : 'connected', n: i });
    q.push(up(4));
    expect(drain(q)).toEqual(['connected0', 'disconnected1', 'connected2', 'disconnected3', 'u4']);
    expect(q.overruns).toBe(0);
  });

  it('stays in order over many pushes and shifts', () => {
    const q = new EventQueue<Ev>(10);
    const got: number[] = [];
    for (let i = 0; i < 5000; i++) {
      q.push(up(i));
      if (i % 3 === 0) got.push(q.shift()!.n);
    }
    for (let ev = q.shift(); ev; ev = q.shift()) got.push(ev.n);
    for (let i = 1; i < got.length; i++) expect(got[i]!).toBeGreaterThan(got[i - 1]!);
    expect(got.length + q.overruns).toBe(5000);
    expect(got[got.length - 1]).toBe(4999);
  });
});
