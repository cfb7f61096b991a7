// Error classes of the client, one per failure whatever the protocol (CA or PVA), each with a
// stable protocol-neutral `code`; the CA-named ones of earlier releases stay as aliases.
import { ecaInfo } from '../ca/constants.js';

/**
 * The stable code of each failure. Earlier releases named them `ERR_CA_*` for both protocols;
 * the old strings are not produced any more (ERR_CA_TIMEOUT is now ERR_EPICS_TIMEOUT, and so on).
 */
export type EpicsErrorCode =
  | 'ERR_EPICS_TIMEOUT'
  | 'ERR_EPICS_DISCONNECTED'
  | 'ERR_EPICS_NOT_FOUND'
  | 'ERR_EPICS_ACCESS_DENIED'
  | 'ERR_EPICS_REMOTE'
  | 'ERR_EPICS_PROTOCOL'
  | 'ERR_EPICS_CLOSED'
  | 'ERR_EPICS_BAD_ARGUMENT'
  | 'ERR_EPICS_ABORTED';

/** Base class of every error the client reports, for Channel Access and PV Access alike. */
export class EpicsError extends Error {
  readonly code: EpicsErrorCode;
  /** The PV name the operation was about, when there is one. */
  readonly pvName: string | undefined;
  constructor(code: EpicsErrorCode, message: string, pvName?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.pvName = pvName;
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/**
 * @deprecated Alias of {@link EpicsError} (the same class: `instanceof CaError` still holds for
 * every error of the client, PVA ones included); use EpicsError.
 */
export const CaError = EpicsError;
/** @deprecated Alias of {@link EpicsError}; use EpicsError. */
export type CaError = EpicsError;
/** @deprecated Alias of {@link EpicsErrorCode}, whose codes are `ERR_EPICS_*`; use EpicsErrorCode. */
export type CaErrorCode = EpicsErrorCode;

/** The operation did not complete within its timeout. */
export class TimeoutError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_TIMEOUT', message, pvName);
  }
}

/** The channel's circuit was lost while the operation was in flight. */
export class DisconnectedError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_DISCONNECTED', message, pvName);
  }
}

/** No server answered the search for this name within the timeout (or a server refused it). */
export class NotFoundError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_NOT_FOUND', message, pvName);
  }
}

/** The server grants no read (or write) access to this channel. */
export class AccessDeniedError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_ACCESS_DENIED', message, pvName);
  }
}

/** The server reported a failure: CA with its ECA status code, PVA with its status type and message. */
export class RemoteError extends EpicsError {
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
    super('ERR_EPICS_REMOTE', pvaType === undefined || !detail ? `${info.name}: ${info.message}${detail ? ` (${detail})` : ''}` : `${info.name}: ${detail}`, pvName);
    this.status = status;
    this.statusName = info.name;
  }
}

/** The server sent something that breaks the protocol; its circuit was closed. */
export class ProtocolError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_PROTOCOL', message, pvName);
  }
}

/** The Context was closed. */
export class ClosedError extends EpicsError {
  constructor(message = 'the context is closed', pvName?: string) {
    super('ERR_EPICS_CLOSED', message, pvName);
  }
}

/** The call itself is wrong: empty or oversized name, a value the channel's type cannot hold. */
export class BadArgumentError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_BAD_ARGUMENT', message, pvName);
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends EpicsError {
  constructor(message = 'the operation was aborted', pvName?: string, cause?: unknown) {
    super('ERR_EPICS_ABORTED', message, pvName, { cause });
  }
}
