//! epicsperf-rust-server: the server runner `epics-rs` (docs/runners.md, "Server runners"):
//! epics-rs's servers, epics-ca-rs's CA server and epics-pva-rs's PVA server, serving one app's
//! PVs in one process.
//!
//!   epicsperf-rust-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... [--latency N]
//!       [--counters N] [--counter-rate HZ]
//!
//! Both servers run on one tokio runtime, from the environment (CA: EPICS_CAS_* / EPICS_CA_*;
//! PVA: EPICS_PVAS_* / EPICS_PVA_*), and serve the same names:
//!
//! - CA: `CaServer` (epics-ca-rs) on an epics-base-rs `PvDatabase` whose simple PVs
//!   (`ProcessVariable`: DBR_DOUBLE, DBR_LONG, DBR_CHAR) are the crossing PVs, the counters and
//!   <P>RAMP;
//! - PVA: epics-pva-rs's native `PvaServer` on a `SharedSource` of `SharedPV`s (pvxs's server
//!   API: NTScalar double, NTScalarArray int32 / byte), one per name.
//!
//! A post hands the update to both, CA's first: `ProcessVariable::set_snapshot` (value, alarm and
//! timeStamp) and then `SharedPV::post_delta` (value and timeStamp marked; for the counters the
//! whole structure, alarm included, which spares the server listing the marked fields' paths at
//! each post), one wall clock read before both as the update's timestamp. The CA int32 arrays and
//! the PVA ones share one buffer. (epics-pva-rs's own bridge of the database, `PvDatabaseSource`,
//! is not used: a PVA monitor of a simple PV through it gets the initial value twice, once read
//! and once seeded, which a crossing client takes for an update.)
//!
//! With --latency N, <P>LATENCY:DOUBLE and <P>LATENCY:CHAR (one element 0 at start) are, over
//! CA, aao records (FTVL DOUBLE / CHAR, NELM N) whose device support is this app's put handler: a
//! client's put (at most N elements: the CA server cuts a longer one to the channel's count)
//! writes the elements and NORD and processes the record, which hands them to write_aao and then
//! posts VAL (the elements put, stamped at processing) before the put completes; a simple PV
//! cannot be one, its CA element count being its current length. Over PVA they are SharedPVs
//! whose onPut handler refuses more than N elements, else stamps the value put with the wall
//! clock, posts it and returns, which completes the put.
//!
//! Threads of the app's own: the poster (post, ship, in order), the ticker of --counter-rate and
//! the ramp thread of `ramp`, each on an absolute schedule of the monotonic clock; the main
//! thread reads the commands and answers `stats` and `ramp` at once.
//! `ready` is written once both servers answer UDP searches for the PVs on the environment's
//! ports (of the counters, the first and the last), as the Python servers' driver checks.

use std::collections::HashMap;
use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use epics_base_rs::error::CaResult;
use epics_base_rs::server::access_security::new_acf_cell;
use epics_base_rs::server::database::PvDatabase;
use epics_base_rs::server::device_support::DeviceSupport;
use epics_base_rs::server::ioc_builder::IocBuilder;
use epics_base_rs::server::pv::ProcessVariable;
use epics_base_rs::server::record::{DbLinkType, DevSup, Dset, Record};
use epics_base_rs::server::snapshot::Snapshot;
use epics_base_rs::types::{EpicsValue, SharedArray, WallTime};
use epics_ca_rs::server::CaServerBuilder;
use epics_pva_rs::nt::NTScalar;
use epics_pva_rs::pvdata::{FieldDesc, PvField, ScalarType, ScalarValue, Value, ValueError};
use epics_pva_rs::server_native::{PvaServer, PvaServerConfig, SharedPV, SharedSource};
use epicsperf_runners::{emit, fail};
use serde_json::json;
const SERVER: &str = "epics-rs";
/// The version Cargo.toml pins (epics-ca-rs and epics-pva-rs, released together).
const VERSION: &str = "0.33.0";
/// At most 127 updates a post: k fits an int8.
const MAX_COUNT: u32 = 127;
/// The counters' alarm: MINOR, status HIGH (epicsAlarmCondition 4), as the built-in IOC's.
const MINOR: u16 = 1;
const HIGH: u16 = 4;
/// How long the servers may take to answer the ready check's searches.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// The highest rate of `ramp HZ`, the built-in IOC's RAMP:RATE limit.
const RAMP_MAX_HZ: f64 = 5000.0;

// ---- arguments ---------------------------------------------------------------------------

struct Args {
    prefix: String,
    int32: Vec<usize>,
    bytes: Vec<usize>,
    latency: usize,
    counters: usize,
    counter_rate: f64,
}

/// A comma-separated list of element counts, each from 1, without repeats ("" for none).
fn sizes(option: &str, text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for s in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match s.parse::<usize>() {
            Ok(n) if (1..=100_000_000).contains(&n) => {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            _ => fail(
                2,
                format!("{option} takes whole numbers from 1 separated by commas, got '{text}'"),
            ),
        }
    }
    out
}

fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) != Some("serve") {
        fail(
            2,
            "usage: epicsperf-rust-server serve --prefix P --int32 N1,N2,... --bytes M1,M2,... \
             [--latency N] [--counters N] [--counter-rate HZ]",
        );
    }
    let mut prefix = None;
    let mut a = Args {
        prefix: String::new(),
        int32: Vec::new(),
        bytes: Vec::new(),
        latency: 0,
        counters: 0,
        counter_rate: 0.0,
    };
    let mut it = argv[1..].iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .unwrap_or_else(|| fail(2, format!("{flag} needs a value")));
        match flag.as_str() {
            "--prefix" => prefix = Some(value.clone()),
            "--int32" => a.int32 = sizes(flag, value),
            "--bytes" => a.bytes = sizes(flag, value),
            "--latency" => match value.parse::<usize>() {
                Ok(n) if (1..=100_000_000).contains(&n) => a.latency = n,
                _ => fail(
                    2,
                    format!("--latency takes a whole number of elements from 1, got '{value}'"),
                ),
            },
            "--counters" => match value.parse::<usize>() {
                Ok(n) if n <= 10_000_000 => a.counters = n,
                _ => fail(
                    2,
                    format!("--counters takes a whole number from 0, got '{value}'"),
                ),
            },
            "--counter-rate" => match value.parse::<f64>() {
                Ok(hz) if hz.is_finite() && (0.0..=1e6).contains(&hz) => a.counter_rate = hz,
                _ => fail(
                    2,
                    format!("--counter-rate takes a number of Hz from 0, got '{value}'"),
                ),
            },
            _ => fail(2, format!("unknown argument {flag}")),
        }
    }
    a.prefix = prefix.unwrap_or_else(|| fail(2, "--prefix P is required"));
    a
}

// ---- the PVs -----------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Double,
    Int32,
    Int8,
}

/// Update k of a PV of `kind`, as each server takes it: the double k, or `n` elements of k (one
/// buffer for both servers' int32 arrays; CA's char is a byte, PVA's an int8).
fn make_value(kind: Kind, n: usize, k: u32) -> (EpicsValue, PvField) {
    match kind {
        Kind::Double => (
            EpicsValue::Double(f64::from(k)),
            PvField::Scalar(ScalarValue::Double(f64::from(k))),
        ),
        Kind::Int32 => {
            let a = SharedArray::from(vec![k as i32; n]);
            (
                EpicsValue::LongArray(a.clone()),
                PvField::scalar_array_int(a),
            )
        }
        Kind::Int8 => (
            EpicsValue::CharArray(SharedArray::from(vec![k as u8; n])),
            PvField::scalar_array_byte(vec![k as i8; n]),
        ),
    }
}

fn nt_desc(kind: Kind) -> FieldDesc {
    match kind {
        Kind::Double => NTScalar::new(ScalarType::Double).build(),
        Kind::Int32 => NTScalar::array(ScalarType::Int).build(),
        Kind::Int8 => NTScalar::array(ScalarType::Byte).build(),
    }
}

fn secs(t: WallTime) -> f64 {
    t.since_unix_epoch().as_secs_f64()
}

/// A PVA update (or first value) of an NTScalar: the value and timeStamp marked, or with `alarm`
/// (as QSRV sends a CA alarm: severity, status DEVICE, message the CA status's name) the whole
/// structure.
fn fill(
    u: &mut Value,
    value: PvField,
    alarm: Option<(u16, u16)>,
    t: WallTime,
) -> Result<(), ValueError> {
    u.unmark_all();
    *u.lookup_mut("value")
        .ok_or_else(|| ValueError::NoField("value".into()))? = value;
    u.mark("value")?;
    if let Some((status, severity)) = alarm {
        u.set("alarm.severity", i32::from(severity))?;
        u.set("alarm.status", i32::from(status != 0))?;
        u.set("alarm.message", if status == HIGH { "HIGH" } else { "" })?;
    }
    let since = t.since_unix_epoch();
    u.set("timeStamp.secondsPastEpoch", since.as_secs() as i64)?;
    u.set("timeStamp.nanoseconds", since.subsec_nanos() as i32)?;
    if alarm.is_some() {
        u.mark_all();
    }
    Ok(())
}

/// The PVA update a poster fills and posts, for PVs of `desc`.
struct Update(Value);

impl Update {
    fn new(desc: FieldDesc) -> Update {
        Update(Value::create_from(desc))
    }

    fn fill(&mut self, value: PvField, alarm: Option<(u16, u16)>, t: WallTime) -> &Value {
        fill(&mut self.0, value, alarm, t)
            .unwrap_or_else(|e| fail(1, format!("a PVA update: {e}")));
        &self.0
    }

    /// The counters' and RAMP's next value: `value` in MINOR alarm (HIGH), stamped now; the stamp
    /// and the update.
    fn counted(&mut self, value: f64) -> (WallTime, &Value) {
        let t = WallTime::now();
        (
            t,
            self.fill(
                PvField::Scalar(ScalarValue::Double(value)),
                Some((HIGH, MINOR)),
                t,
            ),
        )
    }
}

/// A PV as both servers serve it: the CA database's simple PV and the PVA SharedPV.
struct Pv {
    ca: Arc<ProcessVariable>,
    pva: SharedPV,
}

impl Pv {
    /// `name` of the database, and a read-only SharedPV of the source opened at `first`.
    fn new(db: &PvDatabase, source: &SharedSource, name: &str, first: &Value) -> Pv {
        let ca = db
            .find_pv(name)
            .unwrap_or_else(|| fail(1, format!("the database has no PV {name}")));
        let pva = SharedPV::build_readonly();
        if let Err(e) = pva.open(first.desc().clone(), first.field().clone()) {
            fail(1, format!("cannot open {name} for PV Access: {e}"));
        }
        source.add(name, pva.clone());
        Pv { ca, pva }
    }

    /// Hand one update to both servers, CA's and then PVA's (`update`, filled with the same).
    fn post(&self, ca: EpicsValue, status: u16, severity: u16, t: WallTime, update: &Value) {
        self.ca.set_snapshot(Snapshot::new(ca, status, severity, t));
        if let Err(e) = self.pva.post_delta(update.marks(), update.field()) {
            fail(1, format!("a PVA post failed: {e}"));
        }
    }
}

/// A crossing PV: its kind, elements, both servers' PVs and its PVA update.
struct Crossing {
    kind: Kind,
    elements: usize,
    pv: Pv,
    update: Update,
}

/// The crossing PVs: name, kind, elements, in order.
fn crossing_names(a: &Args) -> Vec<(String, Kind, usize)> {
    let p = &a.prefix;
    let mut out = vec![(format!("{p}CROSS:DOUBLE"), Kind::Double, 1)];
    out.extend(
        a.int32
            .iter()
            .map(|&n| (format!("{p}CROSS:INT32:{n}"), Kind::Int32, n)),
    );
    out.extend(
        a.bytes
            .iter()
            .map(|&n| (format!("{p}CROSS:BYTES:{n}"), Kind::Int8, n)),
    );
    out
}

/// `device(aao, CONSTANT, devAaoEpicsperf, "epicsperf")`: the CA round-trip PVs' put handler.
static LATENCY_PUT: DevSup = DevSup {
    name: "devAaoEpicsperf",
    choice: "epicsperf",
    link_type: DbLinkType::Constant,
    dset: Dset::new(5, &[2, 4], false),
};

/// The app's put handler of <P>LATENCY:DOUBLE and :CHAR over CA (their aao's write_aao): the
/// record hands it the value put (VAL, NORD elements, at most NELM = N: the CA server cuts a
/// longer put to the channel's count), which it takes; the record then posts VAL, stamped at
/// processing, before the put completes.
struct LatencyPut;

impl DeviceSupport for LatencyPut {
    fn write(&mut self, _record: &mut dyn Record) -> CaResult<()> {
        Ok(())
    }

    fn dtyp(&self) -> &str {
        LATENCY_PUT.choice
    }
}

/// A round-trip PV over PV Access: a SharedPV whose put handler refuses more than `most`
/// elements, else stamps the value put with the wall clock and posts it (the elements put, as
/// many as were put); the server completes the put when the handler returns.
fn latency_pva(source: &SharedSource, name: &str, element: ScalarType, most: usize) {
    let pv = SharedPV::new();
    pv.on_put(move |pv, mut value| {
        let PvField::Structure(top) = &mut value else {
            return Err("not an NTScalarArray".into());
        };
        let n = match top.get_field("value") {
            Some(PvField::ScalarArrayTyped(a)) => a.len(),
            Some(PvField::ScalarArray(a)) => a.len(),
            _ => 0,
        };
        if n > most {
            return Err(format!("at most {most} elements"));
        }
        let since = WallTime::now().since_unix_epoch();
        if let Some(PvField::Structure(ts)) = top.get_field_mut("timeStamp") {
            ts.set(
                "secondsPastEpoch",
                PvField::Scalar(ScalarValue::Long(since.as_secs() as i64)),
            );
            ts.set(
                "nanoseconds",
                PvField::Scalar(ScalarValue::Int(since.subsec_nanos() as i32)),
            );
        }
        pv.try_post_checked(value)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let zero = match element {
        ScalarType::Double => PvField::scalar_array_double(vec![0.0]),
        _ => PvField::scalar_array_byte(vec![0i8]),
    };
    let mut first = Value::create_from(NTScalar::array(element).build());
    fill(&mut first, zero, None, WallTime::now())
        .unwrap_or_else(|e| fail(1, format!("{name}: {e}")));
    if let Err(e) = pv.open(first.desc().clone(), first.field().clone()) {
        fail(1, format!("cannot open {name} for PV Access: {e}"));
    }
    source.add(name, pv);
}

/// What the app serves, once served.
struct Served {
    crossing: HashMap<String, Crossing>,
    counters: Vec<Pv>,
    ramp: Option<Pv>,
}

/// The first of the variables set, as a server reads its port, else the EPICS default.
fn env_port(names: &[&str], default: u16) -> u16 {
    for name in names {
        if let Ok(v) = std::env::var(name) {
            let v = v.trim();
            if !v.is_empty() {
                return v
                    .parse()
                    .unwrap_or_else(|_| fail(2, format!("{name} is not a port number: {v}")));
            }
        }
    }
    default
}

/// The first address of an interface list, loopback for none or any.
fn env_host(name: &str) -> Ipv4Addr {
    let list = std::env::var(name).unwrap_or_default();
    let first = list.split_whitespace().next().unwrap_or("0.0.0.0");
    let ip = first
        .split(':')
        .next()
        .unwrap_or("")
        .parse()
        .unwrap_or(Ipv4Addr::UNSPECIFIED);
    if ip.is_unspecified() {
        Ipv4Addr::LOCALHOST
    } else {
        ip
    }
}

const CA_PORT: [&str; 2] = ["EPICS_CAS_SERVER_PORT", "EPICS_CA_SERVER_PORT"];
const PVA_TCP_PORT: [&str; 2] = ["EPICS_PVAS_SERVER_PORT", "EPICS_PVA_SERVER_PORT"];
const PVA_UDP_PORT: [&str; 2] = ["EPICS_PVAS_BROADCAST_PORT", "EPICS_PVA_BROADCAST_PORT"];

/// Every PV in the CA database and the PVA source, then both servers started on the
/// environment's ports.
async fn serve(a: &Args) -> CaResult<Served> {
    let start = WallTime::now();
    let mut builder = IocBuilder::new();
    let names = crossing_names(a);
    for (name, kind, n) in &names {
        builder = builder.pv(name, make_value(*kind, *n, 0).0);
    }
    let counter_names: Vec<String> = (1..=a.counters)
        .map(|i| format!("{}CALC{i}", a.prefix))
        .collect();
    let ramp_name = (a.counters > 0).then(|| format!("{}RAMP", a.prefix));
    for name in counter_names.iter().chain(&ramp_name) {
        builder = builder.pv(name, EpicsValue::Double(1.0));
    }
    let latency: Vec<(String, &str)> = if a.latency > 0 {
        vec![
            (format!("{}LATENCY:DOUBLE", a.prefix), "DOUBLE"),
            (format!("{}LATENCY:CHAR", a.prefix), "CHAR"),
        ]
    } else {
        Vec::new()
    };
    if !latency.is_empty() {
        let nelm = a.latency;
        let mut records = String::new();
        for (name, ftvl) in &latency {
            records.push_str(&format!(
                "record(aao, \"{name}\") {{\n  field(DTYP, \"{}\")\n  field(FTVL, \"{ftvl}\")\n  field(NELM, \"{nelm}\")\n}}\n",
                LATENCY_PUT.choice
            ));
        }
        builder = builder
            .db_string(&records, &HashMap::new())?
            .register_device_support("aao", &LATENCY_PUT, || Box::new(LatencyPut));
    }
    let (db, _) = builder.build_served().await?;

    let source = Arc::new(SharedSource::new());
    let mut crossing = HashMap::new();
    for (name, kind, n) in names {
        let (ca, pva) = make_value(kind, n, 0);
        let mut update = Update::new(nt_desc(kind));
        let pv = Pv::new(&db, &source, &name, update.fill(pva, Some((0, 0)), start));
        pv.ca.set_snapshot(Snapshot::new(ca, 0, 0, start));
        crossing.insert(
            name,
            Crossing {
                kind,
                elements: n,
                pv,
                update,
            },
        );
    }
    let mut first = Update::new(nt_desc(Kind::Double));
    let first = first.fill(
        PvField::Scalar(ScalarValue::Double(1.0)),
        Some((HIGH, MINOR)),
        start,
    );
    let counted = |name: &String| {
        let pv = Pv::new(&db, &source, name, first);
        pv.ca
            .set_snapshot(Snapshot::new(EpicsValue::Double(1.0), HIGH, MINOR, start));
        pv
    };
    let counters: Vec<Pv> = counter_names.iter().map(counted).collect();
    let ramp = ramp_name.as_ref().map(counted);
    for (name, ftvl) in &latency {
        // CA: one element 0, processed once (so stamped, and out of UDF) through the put path a
        // client's put takes.
        let zero = if *ftvl == "DOUBLE" {
            EpicsValue::DoubleArray(SharedArray::from(vec![0.0]))
        } else {
            EpicsValue::CharArray(SharedArray::from(vec![0u8]))
        };
        db.put_record_field_from_ca_no_notify(name, "VAL", zero)
            .await?;
        let element = if *ftvl == "DOUBLE" {
            ScalarType::Double
        } else {
            ScalarType::Byte
        };
        latency_pva(&source, name, element, a.latency);
    }

    let ca = CaServerBuilder::serving(db.clone(), new_acf_cell(None), None, None)
        .build()
        .await?;
    let want = env_port(&CA_PORT, 5064);
    if ca.udp_port() != want || ca.tcp_port() != want {
        fail(
            1,
            format!(
                "the CA server port {want} is in use (bound UDP {}, TCP {})",
                ca.udp_port(),
                ca.tcp_port()
            ),
        );
    }
    tokio::spawn(async move {
        if let Err(e) = ca.run().await {
            fail(1, format!("the CA server stopped: {e}"));
        }
        fail(1, "the CA server stopped");
    });

    let config = PvaServerConfig::default()
        .with_env()
        .unwrap_or_else(|e| fail(1, format!("the PVA server's environment: {e}")));
    let pva = PvaServer::start(source, config)
        .unwrap_or_else(|e| fail(1, format!("cannot serve PV Access: {e}")));
    let r = pva.report();
    let (tcp, udp) = (env_port(&PVA_TCP_PORT, 5075), env_port(&PVA_UDP_PORT, 5076));
    if r.tcp_port != tcp || r.udp_port != udp {
        fail(
            1,
            format!(
                "the PVA server ports (TCP {tcp}, UDP {udp}) are in use (bound TCP {}, UDP {})",
                r.tcp_port, r.udp_port
            ),
        );
    }
    tokio::spawn(async move {
        if let Err(e) = pva.wait().await {
            fail(1, format!("the PVA server stopped: {e}"));
        }
        fail(1, "the PVA server stopped");
    });
    Ok(Served {
        crossing,
        counters,
        ramp,
    })
}

// ---- the ready check: searches answered on the environment's ports -----------------------

/// A CA search datagram: VERSION, then a SEARCH per name (DONT_REPLY), its id the cid.
fn ca_search(names: &[(u32, &str)]) -> Vec<u8> {
    let header = |cmd: u16, size: u16, dtype: u16, count: u16, p1: u32, p2: u32| {
        let mut h = Vec::with_capacity(16);
        for v in [cmd, size, dtype, count] {
            h.extend_from_slice(&v.to_be_bytes());
        }
        h.extend_from_slice(&p1.to_be_bytes());
        h.extend_from_slice(&p2.to_be_bytes());
        h
    };
    let mut msg = header(0, 0, 0, 13, 0, 0);
    for &(id, name) in names {
        let mut body = name.as_bytes().to_vec();
        body.push(0);
        body.resize(body.len().next_multiple_of(8), 0);
        msg.extend(header(6, body.len() as u16, 5, 13, id, id));
        msg.extend(body);
    }
    msg
}

/// The ids a CA search reply answers.
fn ca_found(data: &[u8]) -> Vec<u32> {
    let mut found = Vec::new();
    let mut at = 0;
    while at + 16 <= data.len() {
        let cmd = u16::from_be_bytes([data[at], data[at + 1]]);
        let size = u16::from_be_bytes([data[at + 2], data[at + 3]]) as usize;
        if cmd == 6 {
            found.push(u32::from_be_bytes(
                data[at + 12..at + 16].try_into().unwrap(),
            ));
        }
        at += 16 + size;
    }
    found
}

/// A PV Access search request (unicast, little-endian), answered to `reply_port`.
fn pva_search(names: &[(u32, &str)], reply_port: u16) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&1u32.to_le_bytes()); // sequence
    body.extend_from_slice(&[0x80, 0, 0, 0]); // unicast, reserved
    body.extend_from_slice(&[0; 16]); // reply address: the sender's
    body.extend_from_slice(&reply_port.to_le_bytes());
    body.extend_from_slice(&[1, 3]);
    body.extend_from_slice(b"tcp");
    body.extend_from_slice(&(names.len() as u16).to_le_bytes());
    for &(id, name) in names {
        body.extend_from_slice(&id.to_le_bytes());
        body.push(name.len() as u8);
        body.extend_from_slice(name.as_bytes());
    }
    let mut msg = vec![0xCA, 2, 0, 3];
    msg.extend_from_slice(&(body.len() as u32).to_le_bytes());
    msg.extend(body);
    msg
}

/// The ids a PV Access search response answers (none when it says not found).
fn pva_found(data: &[u8]) -> Vec<u32> {
    if data.len() < 8 || data[0] != 0xCA || data[3] != 4 {
        return Vec::new();
    }
    let big = data[2] & 0x80 != 0;
    let u16_at = |i: usize| {
        let b = [data[i], data[i + 1]];
        if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    let u32_at = |i: usize| {
        let b: [u8; 4] = data[i..i + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let mut at = 8 + 12 + 4 + 16 + 2;
    if at >= data.len() {
        return Vec::new();
    }
    at += 1 + data[at] as usize; // the protocol, "tcp"
    if at + 3 > data.len() || data[at] == 0 {
        return Vec::new();
    }
    let count = u16_at(at + 1) as usize;
    at += 3;
    (0..count)
        .take_while(|i| at + 4 * i + 4 <= data.len())
        .map(|i| u32_at(at + 4 * i))
        .collect()
}

/// Search for every name on the protocol's port of the environment until each is answered.
fn await_answers(protocol: &str, names: &[&str]) {
    let (host, port) = if protocol == "CA" {
        (
            env_host("EPICS_CAS_INTF_ADDR_LIST"),
            env_port(&CA_PORT, 5064),
        )
    } else {
        (
            env_host("EPICS_PVAS_INTF_ADDR_LIST"),
            env_port(&PVA_UDP_PORT, 5076),
        )
    };
    let sock = UdpSocket::bind((host, 0))
        .unwrap_or_else(|e| fail(1, format!("cannot open a UDP socket on {host}: {e}")));
    let reply_port = sock.local_addr().map_or(0, |a| a.port());
    let to = SocketAddr::from((host, port));
    let mut pending: HashMap<u32, &str> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u32 + 1, *n))
        .collect();
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut buf = vec![0u8; 65536];
    while !pending.is_empty() {
        if Instant::now() > deadline {
            let name = pending.values().next().unwrap();
            fail(
                1,
                format!(
                    "no {protocol} server answered a search for {name} on {to} within {READY_TIMEOUT:?}"
                ),
            );
        }
        let mut list: Vec<(u32, &str)> = pending.iter().map(|(&i, &n)| (i, n)).collect();
        list.sort_unstable();
        let msg = if protocol == "CA" {
            ca_search(&list)
        } else {
            pva_search(&list, reply_port)
        };
        let _ = sock.send_to(&msg, to); // not listening yet: refused
        let until = Instant::now() + Duration::from_millis(200);
        while !pending.is_empty() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = sock.set_read_timeout(Some(left.max(Duration::from_millis(1))));
            let Ok(n) = sock.recv(&mut buf) else { continue };
            let found = if protocol == "CA" {
                ca_found(&buf[..n])
            } else {
                pva_found(&buf[..n])
            };
            for id in found {
                pending.remove(&id);
            }
        }
    }
}

// ---- the ticker and the ramp -------------------------------------------------------------

/// The counters' last completed tick, for `stats`.
struct Ticked {
    ticks: u64,
    time: f64,
    value: f64,
}

/// Tick j at t0 + j/hz on the monotonic clock (a late tick at once, none skipped; more than 1 s
/// behind, the schedule starts again from now): the value + 1, the wall clock read once, every
/// counter posted in order with them, then the tick counted.
fn ticker(counters: Vec<Pv>, hz: f64, ticked: Arc<Mutex<Ticked>>) {
    let mut update = Update::new(nt_desc(Kind::Double));
    let mut t0 = Instant::now();
    let mut j: u64 = 0;
    let mut value = 1.0;
    loop {
        j += 1;
        let due = t0 + Duration::from_secs_f64(j as f64 / hz);
        let now = Instant::now();
        if now < due {
            std::thread::sleep(due - now);
        } else if now - due > Duration::from_secs(1) {
            t0 = now;
            j = 0;
        }
        value += 1.0;
        let (t, u) = update.counted(value);
        for c in &counters {
            c.post(EpicsValue::Double(value), HIGH, MINOR, t, u);
        }
        let mut g = ticked.lock().unwrap();
        g.ticks += 1;
        g.time = secs(t);
        g.value = value;
    }
}

/// <P>RAMP's schedule, set by `ramp` commands.
struct RampSchedule {
    hz: f64,
    t0: Instant,
    generation: u64,
}

/// The ramp thread's schedule and value. It posts holding the schedule's lock, so that once
/// `ramped` is written no post of the rate before starts; a command that wants the lock raises
/// `waiting` first, and the ramp thread, seeing it between posts, lets go until it is down.
struct Ramp {
    schedule: Mutex<RampSchedule>,
    wake: Condvar,
    waiting: AtomicUsize,
    /// The value of its last post (f64 bits), for `stats`.
    value: AtomicU64,
}

impl Ramp {
    /// `ramp HZ`: in effect (a new schedule from now) when it returns.
    fn set(&self, hz: f64) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        {
            let mut s = self.schedule.lock().unwrap();
            s.hz = hz;
            s.t0 = Instant::now();
            s.generation += 1;
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        self.wake.notify_all();
    }

    fn value(&self) -> f64 {
        f64::from_bits(self.value.load(Ordering::SeqCst))
    }

    /// Post j at t_cmd + j/hz on the monotonic clock (a late post at once, none skipped; more
    /// than 1 s behind, the schedule starts again from now), each adding 1 to the value, stamped
    /// with the wall clock at that post; still at 0 Hz.
    fn run(&self, pv: Pv) {
        let mut update = Update::new(nt_desc(Kind::Double));
        let mut value = 1.0;
        let (mut seen, mut hz, mut t0, mut j) = (0u64, 0.0f64, Instant::now(), 0u64);
        let mut s = self.schedule.lock().unwrap();
        loop {
            if self.waiting.load(Ordering::SeqCst) > 0 {
                s = self.wake.wait(s).unwrap();
                continue;
            }
            if s.generation != seen {
                (seen, hz, t0, j) = (s.generation, s.hz, s.t0, 0);
            }
            let offset = (j + 1) as f64 / hz;
            if hz <= 0.0 || offset > 1e9 {
                s = self.wake.wait(s).unwrap();
                continue;
            }
            let due = t0 + Duration::from_secs_f64(offset);
            let now = Instant::now();
            if now < due {
                s = self.wake.wait_timeout(s, due - now).unwrap().0;
                continue;
            }
            j += 1;
            if now - due > Duration::from_secs(1) {
                t0 = now;
                j = 0;
            }
            value += 1.0;
            let (t, u) = update.counted(value);
            pv.post(EpicsValue::Double(value), HIGH, MINOR, t, u);
            self.value.store(value.to_bits(), Ordering::SeqCst);
        }
    }
}

// ---- posts -------------------------------------------------------------------------------

enum Job {
    Post {
        name: String,
        count: u32,
        period_ms: f64,
    },
    Ship,
    Exit,
}

/// post and ship, in the order given, and then exit: `stats` is answered meanwhile.
fn poster(mut crossing: HashMap<String, Crossing>, jobs: mpsc::Receiver<Job>) {
    // (k, wall clock) of every post since the last ship.
    let mut posts: Vec<f64> = Vec::new();
    for job in jobs {
        match job {
            Job::Post {
                name,
                count,
                period_ms,
            } => {
                let c = crossing
                    .get_mut(&name)
                    .expect("a PV checked when the command came");
                let start = Instant::now();
                for k in 1..=count {
                    // The value is made before the clock is read: the crossing starts at the hand-over.
                    let (ca, pva) = make_value(c.kind, c.elements, k);
                    let due =
                        start + Duration::from_secs_f64(f64::from(k - 1) * period_ms / 1000.0);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    let t = WallTime::now();
                    let u = c.update.fill(pva, None, t);
                    c.pv.post(ca, 0, 0, t, u);
                    posts.push(f64::from(k));
                    posts.push(secs(t));
                }
                emit(&json!({"ev": "posted", "name": name, "count": count}), None);
            }
            Job::Ship => {
                let bytes: Vec<u8> = posts.iter().flat_map(|v| v.to_le_bytes()).collect();
                emit(
                    &json!({"ev": "posts", "count": posts.len() / 2, "bytes": bytes.len()}),
                    Some(&bytes),
                );
                posts.clear();
            }
            Job::Exit => std::process::exit(0),
        }
    }
    std::process::exit(0);
}

/// A decimal number in [0, hi] (no sign, exponent, inf or nan), else None.
fn rate(s: &str, hi: f64) -> Option<f64> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| (0.0..=hi).contains(v))
}

fn main() {
    let a = parse_args();
    // The CA server sends no array larger than EPICS_CA_MAX_ARRAY_BYTES: room for the largest.
    let largest = [
        4 * a.int32.iter().max().copied().unwrap_or(0),
        a.bytes.iter().max().copied().unwrap_or(0),
        8 * a.latency,
    ];
    let need = (largest.into_iter().max().unwrap_or(0) + 4096).max(16384);
    let have = std::env::var("EPICS_CA_MAX_ARRAY_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if have < need {
        // SAFETY: no other thread runs yet.
        unsafe { std::env::set_var("EPICS_CA_MAX_ARRAY_BYTES", need.to_string()) };
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(1, format!("cannot start a tokio runtime: {e}")));
    let served = rt
        .block_on(serve(&a))
        .unwrap_or_else(|e| fail(1, format!("cannot serve: {e}")));

    // Of the counters, the first and the last: a search for them all would not fit a datagram.
    let mut names: Vec<&str> = served.crossing.keys().map(String::as_str).collect();
    names.sort_unstable();
    let latency = [
        format!("{}LATENCY:DOUBLE", a.prefix),
        format!("{}LATENCY:CHAR", a.prefix),
    ];
    if a.latency > 0 {
        names.extend(latency.iter().map(String::as_str));
    }
    let edges = [
        format!("{}CALC1", a.prefix),
        format!("{}CALC{}", a.prefix, a.counters),
        format!("{}RAMP", a.prefix),
    ];
    if a.counters > 0 {
        names.push(&edges[0]);
        if a.counters > 1 {
            names.push(&edges[1]);
        }
        names.push(&edges[2]);
    }
    await_answers("CA", &names);
    await_answers("PVA", &names);
    emit(
        &json!({"ev": "ready", "server": SERVER, "version": VERSION}),
        None,
    );

    let ticked = Arc::new(Mutex::new(Ticked {
        ticks: 0,
        time: 0.0,
        value: 1.0,
    }));
    if a.counters > 0 && a.counter_rate > 0.0 {
        let (counters, hz, t) = (served.counters, a.counter_rate, ticked.clone());
        std::thread::spawn(move || ticker(counters, hz, t));
    }
    let ramp = served.ramp.map(|pv| {
        let r = Arc::new(Ramp {
            schedule: Mutex::new(RampSchedule {
                hz: 0.0,
                t0: Instant::now(),
                generation: 0,
            }),
            wake: Condvar::new(),
            waiting: AtomicUsize::new(0),
            value: AtomicU64::new(1f64.to_bits()),
        });
        let r2 = r.clone();
        std::thread::spawn(move || r2.run(pv));
        r
    });
    let known: Vec<String> = served.crossing.keys().cloned().collect();
    let (jobs, queue) = mpsc::channel();
    let crossing = served.crossing;
    std::thread::spawn(move || poster(crossing, queue));

    // Commands until `exit` (the poster finishes those before it) or the end of stdin (at once).
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["exit"] => {
                let _ = jobs.send(Job::Exit);
                loop {
                    std::thread::park();
                }
            }
            ["stats"] => {
                let (ticks, time, value) = {
                    let g = ticked.lock().unwrap();
                    (g.ticks, g.time, g.value)
                };
                let mut e =
                    json!({"ev": "stats", "ticks": ticks, "tickTime": time, "counterValue": value});
                if let Some(r) = &ramp {
                    e["rampValue"] = json!(r.value());
                }
                e["time"] = json!(secs(WallTime::now()));
                emit(&e, None);
            }
            ["ramp", rest @ ..] => {
                let Some(r) = &ramp else {
                    fail(2, format!("no RAMP without --counters: {line}"))
                };
                let hz = match rest {
                    [hz] => rate(hz, RAMP_MAX_HZ),
                    _ => None,
                };
                let Some(hz) = hz else {
                    fail(
                        2,
                        format!("bad ramp command: {line} (ramp HZ, 0 to {RAMP_MAX_HZ})"),
                    )
                };
                r.set(hz);
                emit(&json!({"ev": "ramped", "hz": hz}), None);
            }
            ["ship"] => {
                let _ = jobs.send(Job::Ship);
            }
            ["post", name, count, period] => {
                if !known.iter().any(|k| k == name) {
                    fail(2, format!("post: no PV named {name}"));
                }
                let count = count
                    .parse::<u32>()
                    .ok()
                    .filter(|c| (1..=MAX_COUNT).contains(c));
                let period = period
                    .parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && (0.0..=3.6e6).contains(p));
                let (Some(count), Some(period_ms)) = (count, period) else {
                    fail(
                        2,
                        format!(
                            "bad post command: {line} (post NAME COUNT PERIOD_MS, COUNT 1 to {MAX_COUNT})"
                        ),
                    )
                };
                let _ = jobs.send(Job::Post {
                    name: name.to_string(),
                    count,
                    period_ms,
                });
            }
            _ => fail(2, format!("unknown command: {line}")),
        }
    }
    std::process::exit(0);
}
