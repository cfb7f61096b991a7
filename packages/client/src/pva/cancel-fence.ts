// The monitor INITs of one PV Access connection held back behind its cancelled monitors, until
// the reply to an echo sent after the cancels shows that the server has written out what it had
// queued for them.
import type { Message } from './messages.js';

/**
 * Why: a pvxs server fails a MONITOR INIT ("Monitor Create implied error") when its send queue
 * to this client is over its limit as the INIT arrives, and the updates it queued for a monitor
 * just cancelled (megabytes for a large array) keep it there until the client has read them.
 * The server answers an echo after everything queued before it, so its reply marks the moment.
 */
export class CancelFence {
  private echoesSent = 0;
  private echoesAnswered = 0;
  /** The count of echo replies that lifts the fence (0: no fence echo in flight). */
  private liftAt = 0;
  /** Monitors were cancelled since the last fence echo: one goes out with this turn's writes. */
  private wanted = false;
  private held: Array<{ id: number; sid: number; m: Message }> = [];

  /** Echo requests sent and replies received so far on the connection (replies come in order). */
  get echoes(): { sent: number; answered: number } {
    return { sent: this.echoesSent, answered: this.echoesAnswered };
  }

  /** New monitor INITs must wait. */
  get closed(): boolean {
    return this.wanted || this.liftAt !== 0;
  }

  /** A started monitor was cancelled: the next monitor INITs wait for an echo sent after it. */
  cancelled(): void {
    this.wanted = true;
  }

  hold(id: number, sid: number, m: Message): void {
    this.held.push({ id, sid, m });
  }

  /** Forget a held INIT (its request was destroyed before it went out); false if none. */
  drop(id: number): boolean {
    const i = this.held.findIndex((h) => h.id === id);
    if (i < 0) return false;
    this.held.splice(i, 1);
    return true;
  }

  /** Forget the held INITs of a destroyed channel (the server would refuse its sid). */
  dropChannel(sid: number): void {
    if (this.held.length) this.held = this.held.filter((h) => h.sid !== sid);
  }

  /** At the end of a turn's writes: true when the fence echo must be written now. */
  takeEcho(): boolean {
    if (!this.wanted) return false;
    this.wanted = false;
    this.liftAt = ++this.echoesSent;
    return true;
  }

  /** Another echo request went out (the connection watchdog's): replies come in order. */
  echoSent(): void {
    this.echoesSent++;
  }

  /** An echo reply came: the INITs to send now, in the order they were made (none while fenced). */
  answered(): Message[] {
    this.echoesAnswered++;
    if (this.liftAt === 0 || this.echoesAnswered < this.liftAt || this.wanted) return [];
    this.liftAt = 0;
    const out = this.held.map((h) => h.m);
    this.held = [];
    return out;
  }

  clear(): void {
    this.wanted = false;
    this.liftAt = 0;
    this.held = [];
  }
}
