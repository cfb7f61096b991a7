// The gateways' declarations agree: each server declared in front of another is one the built-in
// IOC can stand behind (`--server`), serving one protocol; epics-rs's gateways are installed from
// the release of epics-rs that the Rust runners build on.
import { expect, it } from 'vitest';
import { GATEWAYS, isGateway } from '../../src/ioc/gateway.js';
import { IOC_SERVERS } from '../../src/results/index.js';
import { SERVERS } from '../../src/servers/index.js';
import { RUST_GATEWAYS, rustLibraries } from '../../src/toolchains/cargo.js';

it("every gateway is a server row in front of another and one of the built-in IOC's servers, serving one protocol", () => {
  const rows = SERVERS.filter((s) => s.gatewayTo);
  expect(rows.map((s) => s.name).sort()).toEqual(Object.keys(GATEWAYS).sort());
  for (const s of rows) expect(s.protocols, s.name).toEqual([GATEWAYS[s.name]]);
  expect(IOC_SERVERS.filter(isGateway).sort()).toEqual(Object.keys(GATEWAYS).sort());
  expect(['softioc', 'node', 'nope', 'toString'].filter(isGateway)).toEqual([]);
});

it("epics-rs's gateways come from the epics-rs release of the Rust runners", () => {
  expect(RUST_GATEWAYS.version).toBe(rustLibraries()['epics-ca-rs']);
});
