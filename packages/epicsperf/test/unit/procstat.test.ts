// threadCpuSeconds reads each thread of a process from /proc: this process's main thread, busy for
// 0.3 s of CPU, shows most of it under its own thread id and name, and a process that is gone is
// undefined.
import { describe, expect, it } from 'vitest';
import { cpuSeconds, threadCpuSeconds } from '../../src/procstat.js';

describe('threadCpuSeconds', () => {
  it("counts the main thread's CPU under the process id, and no more than the whole process's", () => {
    const before = threadCpuSeconds(process.pid)!.get(process.pid)!.seconds;
    // Busy until the process has used 0.3 s of CPU (by its own count, however loaded the machine),
    // nearly all of it on this thread.
    const start = process.cpuUsage();
    const cpu = (): number => {
      const d = process.cpuUsage(start);
      return (d.user + d.system) / 1e6;
    };
    let x = 0;
    while (cpu() < 0.3) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    const threads = threadCpuSeconds(process.pid)!;
    const main = threads.get(process.pid)!;
    expect(x).toBeGreaterThan(0);
    expect(main.seconds - before).toBeGreaterThanOrEqual(0.2);
    expect(main.name.length).toBeGreaterThan(0);
    const sum = [...threads.values()].reduce((a, t) => a + t.seconds, 0);
    expect(sum).toBeLessThanOrEqual(cpuSeconds(process.pid)! + 0.05);
  });

  it('is undefined for a process that does not exist', () => {
    expect(threadCpuSeconds(0x3fffffff)).toBeUndefined();
  });
});
