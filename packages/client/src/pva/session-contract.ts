// What the client session (./session.ts) asks of its users and tells them: the channels it
// creates, the handler of each request (where replies, updates and failures go) and its events.
import type { BitSet } from './bitset.js';
import type { ResponseMessage } from './messages.js';
import type { Status } from './status.js';
import type { FieldDesc } from './types.js';
import type { PvStructure } from './values.js';

/** Why a channel or operation ended without its reply. */
export type PvaFailReason =
  | { kind: 'disconnected'; message?: string }
  | { kind: 'protocol'; message: string }
  | { kind: 'remote'; status: Status };

/** A channel as the session sees it. */
export interface SessionChannel {
  readonly cid: number;
  readonly name: string;
  onCreated(sid: number): void;
  onCreateFailed(status: Status): void;
  /** The server destroyed the channel. */
  onDestroyed(): void;
}

/** One request (GET, PUT, MONITOR, GET_FIELD) and where its replies go. */
export interface OpHandler {
  /** INIT reply of GET, PUT and MONITOR (type null on failure). */
  onInit?(status: Status, type: FieldDesc | null): void;
  /**
   * A GET reply or a PUT's get-back (a value of its own, every field of the type), a PUT's
   * completion (no value), a GET_FIELD reply (type only).
   */
  onReply?(status: Status, value: PvStructure | undefined, changed: BitSet | undefined, type: FieldDesc | null): void;
  /**
   * One monitor update: a new structure holding every field, the fields it does not mark shared
   * with the previous update's value (which stays as it was). The session keeps it, unchanged, as
   * the base of the next update; the handler may hand it on but must not change it. `changed` is
   * the session's, valid during the call (as in onReply).
   */
  onUpdate?(value: PvStructure, changed: BitSet, overrun: BitSet | undefined): void;
  /** The server ended the monitor (its last message). */
  onFinish?(status: Status): void;
  /**
   * The server answered an echo sent after a pipelined monitor INIT (probeInit) and not the INIT:
   * it ignores them, this one too (sent or still queued: every such INIT of the connection hears it at once).
   */
  onInitIgnored?(): void;
  onFail(reason: PvaFailReason): void;
}

export interface SessionEvents {
  /** Bytes are waiting in take(). */
  wantFlush(): void;
  /** The peer broke the protocol: close the connection. */
  protocolError(reason: string): void;
  /** Connection validation finished (channels can be created). */
  validated(status: Status): void;
  /** A search reply arrived on this connection (TCP name servers). */
  searchResponse?(m: Extract<ResponseMessage, { type: 'SearchResponse' }>): void;
}
