// The gateways' declarations agree: each server declared in front of another is one the built-in
// IOC can stand behind (`--server`), serving one protocol; epics-rs's gateways are installed from
// the release of epics-rs that the Rust runners build on.
import { expect, it } from 'vitest';
import { gatewayProtocol, isGateway } from '../../src/ioc/gateway.js';
import { IOC_SERVERS } from '../../src/results/index.js';
import { SERVERS } from '../../src/servers/index.js';
import { RUST_GATEWAYS, rustLibraries } from '../../src/toolchains/cargo.js';

it("every gateway is one of the built-in IOC's servers, serving one protocol", () => {
  const gateways = SERVERS.filter((s) => s.gatewayTo).map((s) => s.name);
  expect(gateways.sort()).toEqual(['ca-gateway-rs', 'pva-gateway-rs', 'pvagw']);
  expect(IOC_SERVERS.filter(isGateway).sort()).toEqual(gateways);
  expect(gateways.map(gatewayProtocol)).toEqual(['CA', 'PVA', 'PVA']);
  expect(isGateway('softioc') || isGateway('node') || isGateway('nope')).toBe(false);
});

it("epics-rs's gateways come from the epics-rs release of the Rust runners", () => {
  expect(RUST_GATEWAYS.version).toBe(rustLibraries()['epics-ca-rs']);
});
