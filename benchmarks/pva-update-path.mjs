// The CPU of one PV Access monitor update on the library's own path, without a socket or an IOC:
// bursts of 2,000 updates (one per monitor, as the built-in IOC's 2,000 counters send them at each
// scan) fed in 64 KiB reads to the framer, the session and 2,000 PvaMonitors whose callbacks
// count. The type and the updates are QSRV's, byte for byte: its NTScalar (value, alarm,
// timeStamp, display, control, valueAlarm) for field(value,alarm,timeStamp), and a counter's
// update marking the value and the three timestamp fields. Between the bursts it reads MB
// megabytes of other memory, as the IOC and the rest of the host do between two scans. The PV
// Access counterpart of ca-update-path.mjs.
//
//   node benchmarks/pva-update-path.mjs [MB,...] [BURSTS] [DIST ...]
//
// Defaults: 0,16 MB, 1500 bursts, this checkout's packages/client/dist. Each DIST (a dist
// directory of a build of the library, or LABEL=DIR to name it in the table) is run in a fresh
// process, in turn, three times; prints the median ns per update of each build at each MB, and
// the bytes allocated per update over the bursts. MONITORS and ROUNDS in the environment change
// the monitors (2,000; 100,000 as at scale, where the caches no longer hold them) and the
// processes of each build (3).
import { measureBursts, updatePathMain } from './update-path-ab.mjs';

const MONITORS = Number(process.env.MONITORS) || 2000;

/** QSRV's INIT reply for a monitor of an ai record with field(value,alarm,timeStamp), request id 1. */
const INIT_REPLY = Buffer.from(
  '0100000008ff801565706963733a6e742f4e545363616c61723a312e30060576616c75654305616c61726d8007616c61726d5f7403087365766572697479220673746174757322076d657373616765600974696d655374616d70800674696d655f7403107365636f6e64735061737445706f6368230b6e616e6f7365636f6e64732207757365725461672207646973706c6179800006086c696d69744c6f7743096c696d697448696768430b6465736372697074696f6e6005756e6974736009707265636973696f6e2204666f726d8006656e756d5f740205696e646578220763686f696365736807636f6e74726f6c800003086c696d69744c6f7743096c696d69744869676843076d696e53746570430a76616c7565416c61726d80000a06616374697665000d6c6f77416c61726d4c696d6974430f6c6f775761726e696e674c696d69744310686967685761726e696e674c696d6974430e68696768416c61726d4c696d697443106c6f77416c61726d536576657269747922126c6f775761726e696e6753657665726974792213686967685761726e696e675365766572697479221168696768416c61726d5365766572697479220a6879737465726573697343',
  'hex',
);
/** One of its counter updates (request id 1): the value and the timestamp's fields marked, no overrun. */
const UPDATE = Buffer.from('01000000000282030000000000aeb240a18e0b6b0000000059cc2a2d0000000000', 'hex');

/** A message: the 8-byte header (little-endian, from the server) and the payload. */
function message(command, payload) {
  const m = Buffer.alloc(8 + payload.length);
  m.writeUInt8(0xca, 0);
  m.writeUInt8(2, 1);
  m.writeUInt8(0x40, 2); // from the server, little-endian
  m.writeUInt8(command, 3);
  m.writeUInt32LE(payload.length, 4);
  payload.copy(m, 8);
  return m;
}

async function one(dist, mb, bursts) {
  const pva = await import(`${dist}/pva/index.js`);
  const { ClientSession } = await import(`${dist}/pva/session.js`);
  const { Framer } = await import(`${dist}/pva/framer.js`);
  const { PvaMonitor } = await import(`${dist}/client/pva/monitor.js`);
  const { Cmd } = pva;
  let out = [];
  const session = new ClientSession(
    {
      wantFlush() {},
      protocolError: (r) => {
        throw new Error(r);
      },
      validated() {},
    },
    'u',
    'h',
  );
  // As the connection wires them (the in-place path where the build has one).
  const framer = new Framer(
    (h, p, owned) => session.receive(h, p, owned),
    (r) => {
      throw new Error(r);
    },
    undefined,
    undefined,
    session.receiveAt ? (h, bytes, start, end) => session.receiveAt(h, bytes, start, end) : undefined,
  );
  framer.push(message(1, Buffer.from('00000100ff7f0000000100000009616e6f6e796d6f7573', 'hex')).subarray(0)); // validation request
  framer.push(message(9, Buffer.from('ff', 'hex'))); // validated
  session.take();
  let updates = 0;
  const monitors = [];
  const transport = { key: 'bench', session, pipelineIgnored: false, recycle() {}, offerUpdate() {}, withdrawUpdate() {} };
  for (let i = 1; i <= MONITORS; i++) {
    // The channel and its manager as far as a monitor uses them: connected, sid i.
    const ch = { name: `P${i}`, connected: true, sid: i, transport, listen: () => () => {}, timeoutError: () => new Error('timeout') };
    const mgr = { acquire: () => ch, hold() {}, unhold() {}, release() {} };
    monitors.push(
      new PvaMonitor(mgr, ch.name, { request: 'field(value,alarm,timeStamp)' }, (e) => {
        if (e.kind === 'update') updates++;
      }),
    );
  }
  await new Promise((r) => setTimeout(r, 10)); // the monitors subscribe in a microtask
  // Answer every INIT the session sends (a window at a time), with QSRV's type.
  const ids = [];
  const serverTypes = new pva.TypeCache(); // the server's: INITs name their pvRequest type once
  for (let left = MONITORS; left > 0; ) {
    const bytes = session.take();
    if (!bytes) throw new Error(`${left} INITs never sent`);
    const h = pva.emptyHeader();
    for (let pos = 0; pos < bytes.length; pos += 8 + h.payloadSize) {
      pva.readHeader(bytes, pos, h);
      const m = pva.decodeMessage(h, bytes.subarray(pos + 8, pos + 8 + h.payloadSize), { types: serverTypes });
      if (m.type !== 'OpInitRequest') continue;
      const reply = Buffer.from(INIT_REPLY);
      reply.writeInt32LE(m.requestId, 0);
      framer.push(message(Cmd.MONITOR, reply));
      ids.push(m.requestId);
      left--;
    }
  }
  session.take(); // the STARTs
  // One burst: an update of each monitor.
  const one = message(Cmd.MONITOR, UPDATE);
  const burst = Buffer.alloc(one.length * MONITORS);
  for (let i = 0; i < MONITORS; i++) {
    one.copy(burst, i * one.length);
    burst.writeInt32LE(ids[i], i * one.length + 8);
    burst.writeDoubleLE(i * 1.5, i * one.length + 8 + 8);
  }
  const chunk = new Uint8Array(64 * 1024);
  const feed = () => {
    for (let p = 0; p < burst.length; ) {
      const n = Math.min(chunk.length, burst.length - p);
      chunk.set(burst.subarray(p, p + n));
      framer.push(chunk.subarray(0, n));
      p += n;
    }
    // The acks the monitors send, as the connection would write them.
    out = session.take();
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
  console.log(JSON.stringify({ ns: ns / n, bytes: bytes / n, sink: sink > 0 || out !== undefined }));
}

await updatePathMain(import.meta.url, (bursts) => `${MONITORS} PV Access monitors, ${bursts} bursts of one update each`, one);
