// `epics-ops serve`: a saved snapshot's PVs published over CA and PVA with their saved values and
// metadata, read and written by this library's client; with --save the values put are in the file
// when the server stops (on SIGINT), and it exits 0.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Context } from 'epics-client';
import { parseSnapshot, writeSnapshot } from 'epics-client/saveset';
import { OPS_BIN } from 'epicsperf-testkit/cli';

describe('epics-ops serve', () => {
  it('serves a snapshot over CA and PVA; puts are kept and saved back on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epics-ops-serve-'));
    const file = join(dir, 'machine.snap.json');
    writeFileSync(
      file,
      writeSnapshot({
        meta: { time: '2026-11-29T00:00:00Z' },
        pvs: [
          {
            name: 'SRV:DOUBLE',
            ok: true,
            value: 1.25,
            type: 'double',
            count: 1,
            units: 'mm',
            precision: 3,
            seconds: 1_790_000_000,
            nanoseconds: 0,
          },
          { name: 'SRV:MODE', ok: true, value: 1, type: 'enum', count: 1, enumStrings: ['Off', 'On'] },
          { name: 'pva://SRV:WAVE', ok: true, value: [1, 2, 3], type: 'double', count: 3 },
          { name: 'SRV:GONE', ok: false, error: 'ERR_EPICS_NOT_FOUND' },
        ],
      }),
    );
    const child = spawn(process.execPath, [OPS_BIN, 'serve', file, '--save', '--ca-port', '0', '--pva-port', '0'], {
      env: {
        ...process.env,
        EPICS_PVAS_BROADCAST_PORT: '0',
        EPICS_CAS_BEACON_ADDR_LIST: '',
        EPICS_CA_ADDR_LIST: '',
        EPICS_CAS_AUTO_BEACON_ADDR_LIST: 'NO',
        EPICS_PVAS_AUTO_BEACON_ADDR_LIST: 'NO',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('\n')) resolve(err.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    expect(line).toMatch(/serving 3 PVs .*\(1 without a saved value left out\): CA port \d+, PVA port \d+/);
    const caPort = Number(/CA port (\d+)/.exec(line)![1]);
    const ca = new Context({ addrList: ['127.0.0.1'], autoAddrList: false, serverPort: caPort, env: {} });
    try {
      const d = await ca.get('SRV:DOUBLE', { form: 'ctrl' });
      expect([d.value, d.metadata?.units, d.metadata?.precision]).toEqual([1.25, 'mm', 3]);
      expect((await ca.get('SRV:MODE', { type: 'string' })).value).toBe('On');
      await ca.put('SRV:DOUBLE', 7.5);
      await ca.put('SRV:WAVE', [4, 5, 6]);
      expect((await ca.get('SRV:DOUBLE')).value).toBe(7.5);
    } finally {
      await ca.close();
    }
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const saved = parseSnapshot(readFileSync(file, 'utf8'));
    const byName = Object.fromEntries(saved.pvs.map((p) => [p.name, p.value]));
    expect(byName['SRV:DOUBLE']).toBe(7.5);
    expect(byName['pva://SRV:WAVE']).toEqual([4, 5, 6]);
    expect(byName['SRV:MODE']).toBe(1);
  });
});
