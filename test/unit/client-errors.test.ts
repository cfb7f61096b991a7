// The client's error classes: one base class for CA and PVA with protocol-neutral codes, and the
// names of 0.1 (CaError, CaErrorCode) kept as deprecated aliases that still work with instanceof.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  AbortedError, AccessDeniedError, BadArgumentError, CaError, ClosedError, DisconnectedError, EpicsError, NotFoundError,
  ProtocolError, RemoteError, TimeoutError, type CaErrorCode, type EpicsErrorCode,
} from '../../packages/client/src/index.js';

describe('client errors', () => {
  const cases: Array<[EpicsError, string, EpicsErrorCode]> = [
    [new TimeoutError('t', 'PV'), 'TimeoutError', 'ERR_EPICS_TIMEOUT'],
    [new DisconnectedError('d', 'PV'), 'DisconnectedError', 'ERR_EPICS_DISCONNECTED'],
    [new NotFoundError('n', 'PV'), 'NotFoundError', 'ERR_EPICS_NOT_FOUND'],
    [new AccessDeniedError('a', 'PV'), 'AccessDeniedError', 'ERR_EPICS_ACCESS_DENIED'],
    [new RemoteError(2, 'no such field', 'pva://PV', 2), 'RemoteError', 'ERR_EPICS_REMOTE'],
    [new ProtocolError('p', 'PV'), 'ProtocolError', 'ERR_EPICS_PROTOCOL'],
    [new ClosedError(undefined, 'PV'), 'ClosedError', 'ERR_EPICS_CLOSED'],
    [new BadArgumentError('b', 'PV'), 'BadArgumentError', 'ERR_EPICS_BAD_ARGUMENT'],
    [new AbortedError(undefined, 'PV'), 'AbortedError', 'ERR_EPICS_ABORTED'],
  ];

  it.each(cases)('%s: one class per failure, a protocol-neutral code, instanceof EpicsError and Error', (err, name, code) => {
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err.pvName).toMatch(/PV$/);
    expect(err).toBeInstanceOf(EpicsError);
    expect(err).toBeInstanceOf(Error);
  });

  it('CaError is the deprecated alias of EpicsError: the same class, so instanceof holds either way', () => {
    expect(CaError).toBe(EpicsError);
    for (const [err] of cases) expect(err instanceof CaError).toBe(true);
    const base = new CaError('ERR_EPICS_PROTOCOL', 'x');
    expect(base).toBeInstanceOf(EpicsError);
    expect(base.name).toBe('EpicsError');
  });

  it('CaErrorCode is the deprecated alias of EpicsErrorCode; the ERR_CA_* strings are not produced any more', () => {
    expectTypeOf<CaErrorCode>().toEqualTypeOf<EpicsErrorCode>();
    expectTypeOf<CaError>().toEqualTypeOf<EpicsError>();
    for (const [err] of cases) expect(err.code).not.toMatch(/^ERR_CA_/);
  });

  it('a PVA failure names its status type; a CA one its ECA status', () => {
    expect(new RemoteError(2, 'no such field', 'pva://PV', 2).message).toBe('PVA_ERROR: no such field');
    expect(new RemoteError(20 << 3, '', 'PV').statusName).toBe('ECA_PUTFAIL');
  });
});
