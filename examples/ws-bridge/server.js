// A small PV-to-browser bridge on epics-client and ws: an HTTP server for the page (index.html) and a
// WebSocket on /ws that serves monitors (value, alarm, connection state) and puts.
//
//   node examples/ws-bridge/server.js [--port 8080] [--host 127.0.0.1]
//   then open http://127.0.0.1:8080/?pv=TEST:CALC1&pv=TEST:KIND:LONG
//   (a name written pva://TEST:CALC1 is served over PV Access)
//
// Protocol, JSON text frames:
//   browser -> bridge  { type: 'subscribe', pv }   { type: 'unsubscribe', pv }   { type: 'put', pv, value, id }
//   bridge -> browser  { type: 'connection', pv, connected, writable }
//                      { type: 'update', pv, value, severity, status, timestamp, units, precision, states }
//                      { type: 'put', id, pv, ok, error? }   { type: 'error', pv, message }
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Context } from 'epics-client';
import { WebSocketServer } from 'ws';

const { values: args } = parseArgs({
  options: { port: { type: 'string', default: '8080' }, host: { type: 'string', default: '127.0.0.1' } },
});
const page = await readFile(new URL('./index.html', import.meta.url));

/** The client (CA, and PV Access for pva:// names): its configuration comes from the EPICS_CA_* and EPICS_PVA_* environment. */
const ctx = new Context();

/** JSON has no NaN or Infinity, and typed arrays become plain arrays. */
function jsonValue(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v, jsonValue);
  if (Array.isArray(v)) return v.map(jsonValue);
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** Units, precision and enum states of a read: a CA reading's metadata, or a PV Access structure's display and NTEnum choices. */
function metadataOf(r) {
  if (r.metadata) return { units: r.metadata.units, precision: r.metadata.precision, states: r.metadata.enumStrings };
  const nt = r.nt;
  if (nt.kind === 'NTEnum') return { states: nt.value.choices };
  return { units: nt.display?.units || undefined, precision: nt.display?.precision };
}

/** One monitor per PV, shared by every browser that watches it; the last message of each kind is kept for newcomers. */
class Watch {
  sockets = new Set();
  connection = { type: 'connection', pv: '', connected: false, writable: false };
  update = undefined;
  meta = {};

  constructor(pv) {
    this.pv = pv;
    this.connection.pv = pv;
    this.monitor = ctx.monitor(pv, {}, (ev) => this.onEvent(ev));
  }

  onEvent(ev) {
    if (ev.kind === 'update') {
      this.update = {
        type: 'update', pv: this.pv, value: jsonValue(ev.value), severity: ev.severity, status: ev.status,
        timestamp: ev.timestamp.toISOString(), ...this.meta,
      };
      this.send(this.update);
    } else if (ev.kind === 'connected' || ev.kind === 'access') {
      // A pva:// name: PV Access tells no access rights, so the page offers the write (a refused put reports its error).
      this.connection = { type: 'connection', pv: this.pv, connected: true, writable: ev.writeAccess ?? true };
      this.send(this.connection);
      // Units, precision and enum states come once per connection, from a CTRL read (CA) or a read
      // of the whole structure (PV Access).
      if (ev.kind === 'connected') ctx.get(this.pv, { form: 'ctrl' }).then((r) => {
        this.meta = metadataOf(r);
        if (this.update) this.send(Object.assign(this.update, this.meta));
      }, () => {});
    } else if (ev.kind === 'disconnected') {
      this.connection = { type: 'connection', pv: this.pv, connected: false, writable: false };
      this.send(this.connection);
    } else {
      this.send({ type: 'error', pv: this.pv, message: ev.error.message });
    }
  }

  add(ws) {
    this.sockets.add(ws);
    ws.send(JSON.stringify(this.connection));
    if (this.update) ws.send(JSON.stringify(this.update));
  }

  send(msg) {
    const text = JSON.stringify(msg);
    for (const ws of this.sockets) ws.send(text);
  }
}

const watches = new Map();

function subscribe(ws, pv) {
  let w = watches.get(pv);
  if (!w) {
    try {
      w = new Watch(pv);
    } catch (e) {
      ws.send(JSON.stringify({ type: 'error', pv, message: e.message }));
      return;
    }
    watches.set(pv, w);
  }
  w.add(ws);
}

function unsubscribe(ws, pv) {
  const w = watches.get(pv);
  if (!w) return;
  w.sockets.delete(ws);
  if (w.sockets.size === 0) {
    w.monitor.close();
    watches.delete(pv);
  }
}

async function put(ws, { pv, value, id }) {
  try {
    await ctx.put(pv, value, { timeout: 5000 });
    ws.send(JSON.stringify({ type: 'put', id, pv, ok: true }));
  } catch (e) {
    ws.send(JSON.stringify({ type: 'put', id, pv, ok: false, error: e.message }));
  }
}

const http = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/' || path === '/index.html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  }
});

const wss = new WebSocketServer({ server: http, path: '/ws' });
wss.on('connection', (ws) => {
  const mine = new Set();
  ws.on('error', () => ws.terminate());
  ws.on('message', (data) => {
    let msg;
    try {
      msg = JSON.parse(String(data));
    } catch {
      return ws.send(JSON.stringify({ type: 'error', message: 'not JSON' }));
    }
    if (typeof msg?.pv !== 'string') return ws.send(JSON.stringify({ type: 'error', message: 'no pv' }));
    if (msg.type === 'subscribe' && !mine.has(msg.pv)) {
      mine.add(msg.pv);
      subscribe(ws, msg.pv);
    } else if (msg.type === 'unsubscribe' && mine.delete(msg.pv)) unsubscribe(ws, msg.pv);
    else if (msg.type === 'put') void put(ws, msg);
  });
  ws.on('close', () => {
    for (const pv of mine) unsubscribe(ws, pv);
  });
});

http.listen(Number(args.port), args.host, () => {
  const { address, port } = http.address();
  console.log(`ws-bridge listening on http://${address}:${port}/`);
});

async function shutdown() {
  for (const ws of wss.clients) ws.terminate();
  wss.close();
  http.close();
  await ctx.close();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
