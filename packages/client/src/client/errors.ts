// Error classes of the client, one per failure whatever the protocol (CA or PVA), each with a
// stable protocol-neutral `code`: `ERR_EPICS_*`, as Node names its own (`ERR_*`); epics-ops's
// are `ERR_EPICS_OPS_*`, the epicsperf tool's `ERR_EPICSPERF_*`.
import { ecaInfo } from '../ca/constants.js';

/** The stable code of each failure. */
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

/**
 * The server reported a failure: over CA with its ECA status code (`RemoteError.ca`), over PV
 * Access with its status type and message (`RemoteError.pva`).
 */
export class RemoteError extends EpicsError {
  /** CA: the ECA status as sent (message number << 3 | severity); PVA: the status type (1 WARNING, 2 ERROR, 3 FATAL). */
  readonly status: number;
  /** Symbolic name: ECA_PUTFAIL, PVA_ERROR, ... */
  readonly statusName: string;
  readonly protocol: 'ca' | 'pva';

  private constructor(protocol: 'ca' | 'pva', status: number, statusName: string, message: string, pvName?: string) {
    super('ERR_EPICS_REMOTE', message, pvName);
    this.protocol = protocol;
    this.status = status;
    this.statusName = statusName;
  }

  /** A Channel Access failure: its ECA status, and what else the server or the client said. */
  static ca(status: number, detail: string, pvName?: string): RemoteError {
    const info = ecaInfo(status);
    return new RemoteError('ca', status, info.name, `${info.name}: ${info.message}${detail ? ` (${detail})` : ''}`, pvName);
  }

  /** A PV Access failure: the status type (1 WARNING, 2 ERROR, 3 FATAL) and the server's message. */
  static pva(type: number, message: string, pvName?: string): RemoteError {
    const name = `PVA_${['OK', 'WARNING', 'ERROR', 'FATAL'][type] ?? type}`;
    return new RemoteError('pva', type, name, `${name}: ${message || 'the server reported a failure'}`, pvName);
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
