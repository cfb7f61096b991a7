// One-shot PV Access operations on a channel: the connection wait, then GET (INIT, execute,
// destroy), PUT (INIT, put the given fields, destroy) or GET_FIELD; each settles a Pending.
import type { BitSet } from '../../pva/bitset.js';
import { Cmd } from '../../pva/constants.js';
import { buildPvRequest, type PvRequestOptions } from '../../pva/pvrequest.js';
import type { ClientSession, PvaFailReason, OpHandler } from '../../pva/session.js';
import { isSuccess, type Status } from '../../pva/status.js';
import type { FieldDesc, StructureDesc } from '../../pva/types.js';
import type { PvStructure, Typed } from '../../pva/values.js';
import { BadArgumentError, type EpicsError, ClosedError, DisconnectedError, ProtocolError, RemoteError } from '../errors.js';
import { ConnectionWait } from '../connect-wait.js';
import type { PvaChannel, PvaConnectWaiter } from './channel.js';

/** The pvRequest of a call: a string ("field(value,alarm)record[process=true]") or its parts. */
export type PvaRequest = string | PvRequestOptions;

/** What a request's failure becomes, as the channel saw it. */
export function pvaFailure(ch: PvaChannel, reason: PvaFailReason): EpicsError {
  if (reason.kind === 'disconnected')
    return new DisconnectedError(`the connection was lost${reason.message ? ` (${reason.message})` : ''}`, ch.name);
  if (reason.kind === 'protocol') return new ProtocolError(`protocol error from the server: ${reason.message}`, ch.name);
  return remoteError(ch.name, reason.status);
}

export function remoteError(name: string, s: Status): RemoteError {
  return RemoteError.pva(s.type, s.message, name);
}

const requestCache = new Map<string, Typed>();

/** The pvRequest structure of a call (string forms are built once and kept). */
export function pvRequestOf(req: PvaRequest | undefined, fallback: string): Typed {
  const r = req ?? fallback;
  if (typeof r !== 'string') return buildPvRequest(r);
  let t = requestCache.get(r);
  if (!t) {
    try {
      t = buildPvRequest(r);
    } catch (e) {
      throw new BadArgumentError(`bad pvRequest '${r}': ${(e as Error).message}`);
    }
    if (requestCache.size < 64) requestCache.set(r, t);
  }
  return t;
}

/**
 * One request on one channel: waits for the connection, sends once connected (again after a
 * reconnect that came before its reply), forgets its request on cancel.
 */
export abstract class PvaOperation extends ConnectionWait<PvaChannel> implements PvaConnectWaiter, OpHandler {
  protected requestId = 0;
  protected session: ClientSession | undefined;

  /** Send the first request on the connected channel. */
  protected abstract issue(): void;
  protected abstract failed(e: EpicsError): void;

  channelClosed(): void {
    this.waitEnded();
    if (!this.settled) this.failed(new ClosedError(undefined, this.ch.name));
  }

  protected begin(): void {
    if (this.settled) return;
    if (this.ch.state === 'closed') return this.channelClosed();
    const t = this.ch.transport;
    if (!t || !this.ch.connected) return this.wait();
    this.session = t.session;
    this.issue();
  }

  /** OpHandler: the request ended without a reply. A lost connection waits for the next one. */
  onFail(reason: PvaFailReason): void {
    this.requestId = 0;
    if (this.ch.state === 'closed') return this.channelClosed();
    if (reason.kind === 'disconnected' && !this.settled) return this.wait();
    this.failed(pvaFailure(this.ch, reason));
  }

  /** Stop waiting and destroy the request on the server. */
  cancel(): void {
    this.stopWaiting();
    if (this.requestId) {
      this.session?.destroy(this.requestId);
      this.requestId = 0;
    }
  }
}

/**
 * A GET: INIT with the pvRequest, execute, then the reply's structure. With a `key` (the pvRequest
 * as written) a channel read before keeps its request for the next GET, which skips the INIT.
 */
export abstract class PvaGet extends PvaOperation {
  /** The request stays on the server after the reply (kept, or destroyed on settling). */
  private keeping = false;

  constructor(
    ch: PvaChannel,
    private readonly request: Typed,
    private readonly key?: string,
  ) {
    super(ch);
  }

  protected abstract succeeded(type: StructureDesc, value: PvStructure): void;

  protected issue(): void {
    const session = this.session!;
    const kept = this.key === undefined ? 0 : this.ch.takeKept(Cmd.GET, this.key, session, this);
    this.keeping = kept !== 0 || (this.key !== undefined && this.ch.readBefore);
    if (kept) {
      this.requestId = kept;
      this.type = session.typeOf(kept);
      return session.get(kept, false);
    }
    this.requestId = session.init(Cmd.GET, this.ch.sid, this.request, this);
  }

  /** The reply's type (the session forgets a request once its last reply came). */
  private type: StructureDesc | undefined;

  onInit(status: Status, type: FieldDesc | null): void {
    if (!isSuccess(status)) {
      this.requestId = 0;
      return this.failed(remoteError(this.ch.name, status));
    }
    this.type = type as StructureDesc;
    this.session!.get(this.requestId, !this.keeping);
  }

  onReply(status: Status, value: PvStructure | undefined, changed: BitSet | undefined): void {
    const id = this.requestId;
    const type = this.session!.typeOf(id) ?? this.type;
    // Not kept, the server destroyed the request with its reply; kept, a failure destroys it on settling.
    if (!this.keeping) this.requestId = 0;
    if (!isSuccess(status)) return this.failed(remoteError(this.ch.name, status));
    if (!value || !type || !changed) return this.failed(new ProtocolError('GET reply without data', this.ch.name));
    if (this.key !== undefined) {
      this.ch.readBefore = true;
      if (this.keeping && this.ch.keep(Cmd.GET, this.key, this.session!, id)) this.requestId = 0;
    }
    // The value holds every field of the type (defaults where the server marked none), as pvxs gives it.
    this.succeeded(type, value);
  }
}
