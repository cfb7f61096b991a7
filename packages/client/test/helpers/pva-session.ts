// A sans-I/O client session for unit tests: messages fed to it as a server would encode them, and
// the messages it wrote, decoded as a server would.
import { decodeMessage, emptyHeader, encodeMessages, readHeader, TypeCache, type Message, type PvaHeader } from '../../src/pva/index.js';
import { ClientSession } from '../../src/pva/session.js';

/** A session of user "alice" on "host1"; `x509`: its connection is TLS with a client certificate. */
export function session(x509 = false) {
  const errors: string[] = [];
  let validated = 0;
  let flushes = 0;
  const s = new ClientSession(
    { wantFlush: () => flushes++, protocolError: (r) => errors.push(r), validated: () => validated++ },
    'alice',
    'host1',
    x509,
  );
  const feed = (...m: Message[]): void => {
    const bytes = encodeMessages(m);
    let pos = 0;
    while (pos < bytes.length) {
      const h: PvaHeader = emptyHeader();
      readHeader(bytes, pos, h);
      const size = h.flags & 1 ? 0 : h.payloadSize;
      s.receive(h, bytes.subarray(pos + 8, pos + 8 + size));
      pos += 8 + size;
    }
  };
  const serverTypes = new TypeCache(); // the server's cache for this connection (INITs send a pvRequest type once)
  const sent = (): Message[] => {
    const b = s.take();
    const out: Message[] = [];
    let pos = 0;
    while (b && pos < b.length) {
      const h = emptyHeader();
      readHeader(b, pos, h);
      const size = h.flags & 1 ? 0 : h.payloadSize;
      out.push(decodeMessage(h, b.subarray(pos + 8, pos + 8 + size), { types: serverTypes }) as Message);
      pos += 8 + size;
    }
    return out;
  };
  /** `flushes`: how many times the session asked for its bytes to be taken. */
  return { s, feed, sent, errors, validated: () => validated, flushes: () => flushes };
}
