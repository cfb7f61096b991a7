// What the built-in IOC counts on its own side (python/array_stats.py): the counter ticks and
// array updates it published and the arrays clients put to it, asked for over its stdin, answered on its stdout.
import type { ChildProcess } from 'node:child_process';
import { IocError } from '../errors.js';

export interface IocStats {
  /** Updates of PREFIX:ARRAY published so far (the last update's number k). */
  arrayUpdates: number;
  /** When the last one was published, POSIX s. */
  arrayTime: number;
  /** When the IOC answered, POSIX s. */
  time: number;
  /** Arrays clients put to PREFIX:ARRAY:PUT, their elements in total, and how many failed the check. */
  puts: number;
  putElements: number;
  putBad: number;
  /** The first few failed checks, one line each. */
  putFindings: string[];
  putFirstTime: number;
  putLastTime: number;
  /** Counter ticks posted so far, and the last counter's value when it answered: the ticks the
   *  IOC really processed (plus any values skipped through PREFIX:SKIP). */
  ticks?: number;
  /** When the last tick was posted, POSIX s. */
  tickTime?: number;
  counterValue?: number;
  /** PREFIX:RAMP's value when it answered: it counts up by 1 per update (the load workload's ramp). */
  rampValue?: number;
}

/** Asks a running IOC child for its counts; one question at a time, answered in order. */
export class StatsChannel {
  private waiting: ((s: IocStats) => void)[] = [];
  private buf = '';

  constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: string | Buffer) => {
      this.buf += chunk.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).trim();
        this.buf = this.buf.slice(nl + 1);
        if (line.startsWith('stats ')) this.waiting.shift()?.(JSON.parse(line.slice(6)) as IocStats);
      }
    });
  }

  ask(timeoutMs = 5000, command: 'stats' | 'reset-puts' = 'stats'): Promise<IocStats> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new IocError('the IOC did not answer a stats request')), timeoutMs);
      this.waiting.push((s) => {
        clearTimeout(timer);
        resolve(s);
      });
      this.child.stdin!.write(command + '\n');
    });
  }
}
