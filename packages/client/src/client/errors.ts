// Error classes of the client, one per failure, each with a stable `code`.
import { ecaInfo } from '../ca/constants.js';

export type CaErrorCode =
  | 'ERR_CA_TIMEOUT'
  | 'ERR_CA_DISCONNECTED'
  | 'ERR_CA_NOT_FOUND'
  | 'ERR_CA_ACCESS_DENIED'
  | 'ERR_CA_REMOTE'
  | 'ERR_CA_PROTOCOL'
  | 'ERR_CA_CLOSED'
  | 'ERR_CA_BAD_ARGUMENT'
  | 'ERR_CA_ABORTED';

/** Base class of every error the client reports. */
export class CaError extends Error {
  readonly code: CaErrorCode;
  /** The PV name the operation was about, when there is one. */
  readonly pvName: string | undefined;
  constructor(code: CaErrorCode, message: string, pvName?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.pvName = pvName;
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** The operation did not complete within its timeout. */
export class TimeoutError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_TIMEOUT', message, pvName);
  }
}

/** The channel's circuit was lost while the operation was in flight. */
export class DisconnectedError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_DISCONNECTED', message, pvName);
  }
}

/** No server answered the search for this name within the timeout (or a server refused it). */
export class NotFoundError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_NOT_FOUND', message, pvName);
  }
}

/** The server grants no read (or write) access to this channel. */
export class AccessDeniedError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_ACCESS_DENIED', message, pvName);
  }
}

/** The server reported a failure: CA with its ECA status code, PVA with its status type and message. */
export class RemoteError extends CaError {
  /** ECA status as sent (message number << 3 | severity). */
  readonly status: number;
  /** Symbolic name, e.g. ECA_PUTFAIL. */
  readonly statusName: string;
  /**
   * A CA failure with its ECA status; or, with `pvaType` (the PVA status type: 1 WARNING,
   * 2 ERROR, 3 FATAL), a PV Access failure whose server message is `detail`.
   */
  constructor(status: number, detail: string, pvName?: string, pvaType?: number) {
    const info = pvaType === undefined ? ecaInfo(status) : { name: `PVA_${['OK', 'WARNING', 'ERROR', 'FATAL'][pvaType] ?? pvaType}`, message: 'the server reported a failure' };
    super('ERR_CA_REMOTE', pvaType === undefined || !detail ? `${info.name}: ${info.message}${detail ? ` (${detail})` : ''}` : `${info.name}: ${detail}`, pvName);
    this.status = status;
    this.statusName = info.name;
  }
}

/** The server sent something that breaks the protocol; its circuit was closed. */
export class ProtocolError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_PROTOCOL', message, pvName);
  }
}

/** The Context was closed. */
export class ClosedError extends CaError {
  constructor(message = 'the context is closed', pvName?: string) {
    super('ERR_CA_CLOSED', message, pvName);
  }
}

/** The call itself is wrong: empty or oversized name, a value the channel's type cannot hold. */
export class BadArgumentError extends CaError {
  constructor(message: string, pvName?: string) {
    super('ERR_CA_BAD_ARGUMENT', message, pvName);
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends CaError {
  constructor(message = 'the operation was aborted', pvName?: string, cause?: unknown) {
    super('ERR_CA_ABORTED', message, pvName, { cause });
  }
}
