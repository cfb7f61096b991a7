// The CPU of one CA monitor update on the library's own path, without a socket or an IOC: bursts
// of 2,000 DBR_TIME_DOUBLE updates (one per monitor, as the built-in IOC's 2,000 counters send
// them at each scan) fed in 64 KiB reads to the framer, the circuit and 2,000 ChannelMonitors
// whose callbacks count. Between the bursts it reads MB megabytes of other memory, as the IOC and
// the rest of the host do between two scans, so that the caches hold what they would.
//
//   node benchmarks/ca-update-path.mjs [MB,...] [BURSTS] [DIST ...]
//
// Defaults: 0,16 MB, 1500 bursts, this checkout's packages/client/dist. Each DIST (a dist
// directory of a build of the library, or LABEL=DIR to name it in the table) is run in a fresh
// process, in turn, three times; prints the median ns per update of each build at each MB, and
// the bytes allocated per update over the bursts. MONITORS and ROUNDS in the environment change
// the monitors (2,000; 100,000 as at scale, where the caches no longer hold them) and the
// processes of each build (3).
import { measureBursts, updatePathMain } from './update-path-ab.mjs';

const MONITORS = Number(process.env.MONITORS) || 2000;
const UPDATE_BYTES = 40;

async function one(dist, mb, bursts) {
  const { Framer } = await import(`${dist}/ca/framer.js`);
  const { ClientCircuit } = await import(`${dist}/ca/circuit.js`);
  const { ChannelMonitor } = await import(`${dist}/client/ca/monitor.js`);
  const circuit = new ClientCircuit({
    wantFlush() {},
    protocolError(r) {
      throw new Error(r);
    },
  });
  let updates = 0;
  const monitors = [];
  for (let i = 1; i <= MONITORS; i++) {
    // The channel and its manager as far as a monitor uses them: connected, a double, sid i.
    const ch = {
      name: `P${i}`,
      connected: true,
      canRead: true,
      canWrite: true,
      nativeType: 6,
      nativeCount: 1,
      sid: i,
      listen: () => () => {},
      transport: { circuit },
    };
    const mgr = { acquire: () => ch, config: { maxArrayBytes: 16384 }, hold() {}, unhold() {}, release() {} };
    monitors.push(
      new ChannelMonitor(mgr, ch.name, { type: 'double' }, (e) => {
        if (e.kind === 'update') updates++;
      }),
    );
  }
  await new Promise((r) => setTimeout(r, 10)); // the monitors subscribe in a microtask
  if (circuit.subscriptionCount !== MONITORS) throw new Error(`${circuit.subscriptionCount} subscriptions`);
  // One burst: an EVENT_ADD of each subscription (ids 1..2000, as the circuit gave them).
  const burst = new Uint8Array(MONITORS * UPDATE_BYTES);
  const v = new DataView(burst.buffer);
  for (let i = 0; i < MONITORS; i++) {
    const o = i * UPDATE_BYTES;
    v.setUint16(o, 1);
    v.setUint16(o + 2, 24);
    v.setUint16(o + 4, 20);
    v.setUint16(o + 6, 1);
    v.setUint32(o + 8, 1);
    v.setUint32(o + 12, i + 1);
    v.setUint32(o + 20, 1e9 + i);
    v.setFloat64(o + 32, i * 1.5);
  }
  const framer = new Framer(
    (h, p, ow, ho) => circuit.receive(h, p, ow, ho),
    (r) => {
      throw new Error(r);
    },
    1 << 20,
    undefined,
    { swapArrays: true, inPlace: (h, b, o) => circuit.receiveAt(h, b, o) },
  );
  const chunk = new Uint8Array(64 * 1024);
  const feed = () => {
    for (let p = 0; p < burst.length; ) {
      const n = Math.min(chunk.length, burst.length - p);
      chunk.set(burst.subarray(p, p + n));
      framer.push(chunk.subarray(0, n));
      p += n;
    }
  };
  const other = new Float64Array((mb * 1024 * 1024) / 8);
  let sink = 0;
  const evict = () => {
    for (let i = 0; i < other.length; i += 8) sink += other[i]++;
  };
  for (let i = 0; i < 500; i++) feed(); // warm-up: optimised code
  const u0 = updates;
  const { ns, bytes } = measureBursts(bursts, evict, feed);
  const n = updates - u0;
  if (n !== bursts * MONITORS) throw new Error(`${n} updates of ${bursts * MONITORS}`);
  for (const m of monitors) m.close();
  console.log(JSON.stringify({ ns: ns / n, bytes: bytes / n, sink: sink > 0 }));
}

await updatePathMain(import.meta.url, (bursts) => `${MONITORS} monitors, ${bursts} bursts of one update each`, one);
