//! epicsperf-rust-pva: the runner of the rust-pva client, epics-pva-rs's PvaClient (pure Rust PV
//! Access, async on tokio). docs/runners.md describes the protocol.
//!
//!   epicsperf-rust-pva snapshot --names FILE --timeout-ms N
//!   epicsperf-rust-pva monitor --names FILE --samples N
//!   epicsperf-rust-pva array --names FILE --samples N [--check-all]
//!   epicsperf-rust-pva array-put --names FILE --samples N --elements E --type T
//!   epicsperf-rust-pva latency --names FILE --samples N --sizes S1,S2,... [--type double|char]
//!
//! One PvaClient from the EPICS_PVA_* environment. Snapshot: pvget_fields of value, alarm and
//! timeStamp per name, all joined, each under its own timeout. Monitor and array: pvmonitor_handle
//! per name (the whole structure, as the library requests it), whose callback runs on the
//! library's task and stores the update; the array task looks at three elements of the
//! received typed array (every one with --check-all), which the library decodes without a copy
//! of its own beyond the wire buffer. array-put: pvput_pv_field of a typed array, awaiting the
//! put's reply (PV Access has no put without one, so --no-callback fails saying so). latency:
//! the same put, and its own update awaited from the subscription's callback.

use std::sync::Arc;
use std::time::{Duration, Instant};

use epics_pva_rs::client::PvaClient;
use epics_pva_rs::pvdata::{PvField, PvStructure, ScalarValue, TypedScalarArray};
use epicsperf_runners::{
    ArrayCheck, BAD_LENGTH, Commands, Entry, Events, LATENCY_ROUNDS_NOT_KEPT, Options, Sample,
    Store, ca_status, check_array, elapsed_ms, emit, emit_ready, fail, number, numbers,
    ship_results, wall_now, wrap_i8, wrap_i16, wrap_i32, wrap_u8,
};
use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const CLIENT: &str = "rust-pva";

#[tokio::main]
async fn main() {
    let o = Options::from_args();
    let mut commands = Commands::start();
    // The library's own bound on each operation: the snapshot's timeout, else a minute for a put.
    let timeout = Duration::from_secs_f64(o.timeout_ms.map_or(60.0, |ms| ms / 1000.0));
    let client = PvaClient::builder().timeout(timeout).build();
    emit_ready(CLIENT, epics_pva_rs::VERSION);
    match o.task.as_str() {
        "snapshot" => snapshot(&client, &o, timeout, &mut commands).await,
        "monitor" => monitor(&client, &o, &mut commands).await,
        "array" => array(&client, &o, &mut commands).await,
        "array-put" => array_put(&client, &o, &mut commands).await,
        "latency" => latency(&client, &o, &mut commands).await,
        w => fail(2, format!("unknown task {w}")),
    }
    commands.expect("exit").await;
    client.close();
}

// ---- reading NT structures ---------------------------------------------------------------

fn scalar_f64(v: &ScalarValue) -> f64 {
    match v {
        ScalarValue::Boolean(b) => f64::from(u8::from(*b)),
        ScalarValue::Byte(x) => f64::from(*x),
        ScalarValue::Short(x) => f64::from(*x),
        ScalarValue::Int(x) => f64::from(*x),
        ScalarValue::Long(x) => *x as f64,
        ScalarValue::UByte(x) => f64::from(*x),
        ScalarValue::UShort(x) => f64::from(*x),
        ScalarValue::UInt(x) => f64::from(*x),
        ScalarValue::ULong(x) => *x as f64,
        ScalarValue::Float(x) => f64::from(*x),
        ScalarValue::Double(x) => *x,
        ScalarValue::String(s) => s.as_str_lossy().parse().unwrap_or(f64::NAN),
    }
}

fn field_f64(s: &PvStructure, name: &str) -> f64 {
    match s.get_field(name) {
        Some(PvField::Scalar(v)) => scalar_f64(v),
        _ => f64::NAN,
    }
}

/// Alarm severity, CA alarm status (alarm.message when it names one, else alarm.status) and
/// the IOC timestamp of an NT structure.
fn meta(s: &PvStructure) -> (i16, i16, f64) {
    let (mut severity, mut status) = (0, 0);
    if let Some(PvField::Structure(a)) = s.get_field("alarm") {
        severity = field_f64(a, "severity") as i32;
        let message = match a.get_field("message") {
            Some(PvField::Scalar(ScalarValue::String(m))) => m.as_str_lossy().into_owned(),
            _ => String::new(),
        };
        status = ca_status(&message, field_f64(a, "status") as i32);
    }
    let stamp = match s.get_field("timeStamp") {
        Some(PvField::Structure(t)) => {
            field_f64(t, "secondsPastEpoch") + field_f64(t, "nanoseconds") * 1e-9
        }
        _ => 0.0,
    };
    (severity as i16, status as i16, stamp)
}

fn structure<'a>(v: &'a PvField, name: &str) -> &'a PvStructure {
    match v {
        PvField::Structure(s) => s,
        _ => fail(1, format!("{name}: the value is not a structure")),
    }
}

/// The value field as a number: a scalar, an NTEnum's index, else NaN.
fn value_f64(s: &PvStructure) -> f64 {
    match s.get_field("value") {
        Some(PvField::Scalar(v)) => scalar_f64(v),
        Some(PvField::Structure(e)) => field_f64(e, "index"),
        _ => f64::NAN,
    }
}

/// The first element and check bits of a typed array, in its own element type; its length.
fn check_typed(a: &TypedScalarArray, check_all: bool) -> Option<(f64, i16, usize)> {
    let (first, bad) = match a {
        TypedScalarArray::Byte(x) => check_array(x, check_all),
        TypedScalarArray::UByte(x) => check_array(x, check_all),
        TypedScalarArray::Short(x) => check_array(x, check_all),
        TypedScalarArray::UShort(x) => check_array(x, check_all),
        TypedScalarArray::Int(x) => check_array(x, check_all),
        TypedScalarArray::UInt(x) => check_array(x, check_all),
        TypedScalarArray::Long(x) => check_array(x, check_all),
        TypedScalarArray::ULong(x) => check_array(x, check_all),
        TypedScalarArray::Float(x) => check_array(x, check_all),
        TypedScalarArray::Double(x) => check_array(x, check_all),
        _ => return None,
    };
    Some((first, bad, a.len()))
}

/// The value field's array: its first element, check bits and length.
fn check_value(s: &PvStructure, check_all: bool) -> Option<(f64, i16, usize)> {
    match s.get_field("value") {
        Some(PvField::ScalarArrayTyped(a)) => check_typed(a, check_all),
        // The untyped form (the library's decoder gives it only for string and boolean arrays).
        Some(PvField::ScalarArray(items)) => {
            let first = items.first().map_or(f64::NAN, scalar_f64);
            let mut bad = if items.is_empty() { BAD_LENGTH } else { 0 };
            if let (Some(m), Some(l)) = (items.get(items.len() / 2), items.last()) {
                bad |= i16::from(scalar_f64(m) != first) | (i16::from(scalar_f64(l) != first) << 1);
            }
            Some((first, bad, items.len()))
        }
        _ => None,
    }
}

// ---- snapshot ----------------------------------------------------------------------------

fn json_value(s: &PvStructure) -> Value {
    match s.get_field("value") {
        Some(PvField::Scalar(ScalarValue::String(t))) => {
            Value::String(t.as_str_lossy().into_owned())
        }
        Some(PvField::Scalar(v)) => number(scalar_f64(v)),
        Some(PvField::Structure(e)) => number(field_f64(e, "index")),
        Some(PvField::ScalarArrayTyped(a)) => match a {
            TypedScalarArray::Byte(x) => numbers(x),
            TypedScalarArray::UByte(x) => numbers(x),
            TypedScalarArray::Short(x) => numbers(x),
            TypedScalarArray::UShort(x) => numbers(x),
            TypedScalarArray::Int(x) => numbers(x),
            TypedScalarArray::UInt(x) => numbers(x),
            TypedScalarArray::Long(x) => numbers(x),
            TypedScalarArray::ULong(x) => numbers(x),
            TypedScalarArray::Float(x) => numbers(x),
            TypedScalarArray::Double(x) => numbers(x),
            TypedScalarArray::Boolean(x) => {
                Value::Array(x.iter().map(|&b| json!(u8::from(b))).collect())
            }
            TypedScalarArray::String(x) => {
                Value::Array(x.iter().map(|t| json!(t.as_str_lossy())).collect())
            }
        },
        Some(PvField::ScalarArray(items)) => {
            Value::Array(items.iter().map(|v| number(scalar_f64(v))).collect())
        }
        _ => Value::Null,
    }
}

async fn read_one(client: &PvaClient, name: &str, timeout: Duration, t0: Instant) -> Entry {
    let failed = |error: String| Entry::Failed {
        error,
        elapsed_ms: elapsed_ms(t0),
    };
    match tokio::time::timeout(
        timeout,
        client.pvget_fields(name, &["value", "alarm", "timeStamp"]),
    )
    .await
    {
        // PV Access does not tell a name no server has from a get not answered in time.
        Err(_) | Ok(Err(epics_pva_rs::error::PvaError::Timeout)) => failed("not found".into()),
        Ok(Err(e)) => failed(e.to_string()),
        Ok(Ok(r)) => {
            let PvField::Structure(s) = &r.value else {
                return failed("the value is not a structure".into());
            };
            let (severity, status, stamp) = meta(s);
            Entry::Ok {
                value: json_value(s),
                severity: i32::from(severity),
                status: i32::from(status),
                stamp,
                elapsed_ms: elapsed_ms(t0),
            }
        }
    }
}

async fn snapshot(client: &PvaClient, o: &Options, timeout: Duration, commands: &mut Commands) {
    commands.expect("start").await;
    let t0 = Instant::now();
    let entries = join_all(o.names.iter().map(|n| read_one(client, n, timeout, t0))).await;
    emit(&json!({"ev": "done"}), None);
    commands.expect("ship").await;
    ship_results(&entries);
}

// ---- monitor and array -------------------------------------------------------------------

async fn monitor(client: &PvaClient, o: &Options, commands: &mut Commands) {
    let store = Arc::new(Store::new(o.names.len(), o.samples));
    commands.expect("start").await;
    let subscriptions = join_all(o.names.iter().enumerate().map(|(i, name)| {
        let store = store.clone();
        let on_update = move |_: &_, v: &PvField| {
            let received = wall_now();
            let PvField::Structure(s) = v else { return };
            let (severity, status, stamp) = meta(s);
            let sample = Sample {
                pv: i as u32,
                severity,
                status,
                value: value_f64(s),
                stamp,
                received,
            };
            store.add(sample, Events::Monitor);
        };
        async move {
            client
                .pvmonitor_handle(name, on_update, |_| {})
                .await
                .unwrap_or_else(|e| fail(1, format!("{name}: {e}")))
        }
    }))
    .await;
    if o.names.is_empty() {
        emit(&json!({"ev": "connected", "count": 0}), None);
        emit(&json!({"ev": "complete"}), None);
    }
    commands.expect("ship").await;
    store.ship();
    drop(subscriptions);
}

async fn array(client: &PvaClient, o: &Options, commands: &mut Commands) {
    let store = Arc::new(Store::new(1, o.samples));
    let name = o.names[0].clone();
    let check_all = o.check_all;
    commands.expect("start").await;
    let task_store = store.clone();
    let mut check = ArrayCheck::default();
    let on_update = move |_: &_, v: &PvField| {
        let received = wall_now();
        let s = structure(v, &name);
        let (severity, _, stamp) = meta(s);
        let Some((first, bad, length)) = check_value(s, check_all) else {
            fail(1, format!("{name}: the value is not a numeric array"))
        };
        let sample = Sample {
            pv: 0,
            severity,
            status: check.length(length, bad),
            value: first,
            stamp,
            received,
        };
        task_store.add(sample, Events::Array { elements: length });
    };
    let subscription = client
        .pvmonitor_handle(&o.names[0], on_update, |_| {})
        .await
        .unwrap_or_else(|e| fail(1, format!("{}: {e}", o.names[0])));
    commands.expect("ship").await;
    store.ship();
    drop(subscription);
}

// ---- array-put and latency ---------------------------------------------------------------

/// An array of `n` elements of the named type, each `k` wrapped to it.
fn filled(element_type: &str, n: usize, k: i64) -> PvField {
    match element_type {
        "float" => PvField::scalar_array_float(vec![k as f32; n]),
        "int64" => PvField::scalar_array_long(vec![k; n]),
        "int32" => PvField::scalar_array_int(vec![wrap_i32(k); n]),
        "int16" => PvField::scalar_array_short(vec![wrap_i16(k); n]),
        "int8" => PvField::scalar_array_byte(vec![wrap_i8(k); n]),
        "char" => PvField::scalar_array_ubyte(vec![wrap_u8(k); n]),
        _ => PvField::scalar_array_double(vec![k as f64; n]),
    }
}

async fn array_put(client: &PvaClient, o: &Options, commands: &mut Commands) {
    let store = Store::new(1, o.samples);
    let name = &o.names[0];
    commands.expect("start").await;
    if o.no_callback {
        fail(1, "PV Access has no put without a reply (epics-pva-rs)");
    }
    if let Err(e) = client.pvconnect(name).await {
        fail(1, format!("{name}: not found ({e})"));
    }
    emit(&json!({"ev": "connected", "count": 1}), None);
    for k in 1..=o.samples as i64 {
        let value = filled(&o.element_type, o.elements, k);
        let t0 = wall_now();
        let status = i16::from(client.pvput_pv_field(name, &value).await.is_err());
        store.add(
            Sample {
                pv: 0,
                status,
                value: k as f64,
                stamp: t0,
                received: wall_now(),
                ..Sample::default()
            },
            Events::None,
        );
    }
    emit(&json!({"ev": "complete", "elements": o.elements}), None);
    commands.expect("ship").await;
    store.ship();
}

/// One update as the latency task needs it: first element, length, severity, IOC time,
/// receive time.
type Update = (f64, usize, i16, f64, f64);

async fn latency(client: &PvaClient, o: &Options, commands: &mut Commands) {
    let store = Store::new(o.sizes.len(), o.samples);
    let name = o.names[0].clone();
    let element_type = if o.element_type == "char" {
        "char"
    } else {
        "double"
    };
    commands.expect("start").await;
    let (tx, mut updates) = mpsc::unbounded_channel::<Update>();
    let on_update = move |_: &_, v: &PvField| {
        let received = wall_now();
        let PvField::Structure(s) = v else { return };
        let (severity, _, stamp) = meta(s);
        let (first, _, length) = check_value(s, false).unwrap_or((value_f64(s), 0, 1));
        let _ = tx.send((first, length, severity, stamp, received));
    };
    let subscription = client
        .pvmonitor_handle(&name, on_update, |_| {})
        .await
        .unwrap_or_else(|e| fail(1, format!("{name}: {e}")));
    if !matches!(
        tokio::time::timeout(Duration::from_secs(30), updates.recv()).await,
        Ok(Some(_))
    ) {
        fail(1, format!("{name}: no first monitor update"));
    }
    emit(&json!({"ev": "connected", "count": 1}), None);
    let mut counter: i64 = 0;
    for (i, &size) in o.sizes.iter().enumerate() {
        for round in -LATENCY_ROUNDS_NOT_KEPT..o.samples as i64 {
            let want = counter % 250 + 1;
            counter += 1;
            let value = filled(element_type, size, want);
            let t0 = wall_now();
            // The put's reply and its own update are awaited together: the update may come first.
            let put = client.pvput_pv_field(&name, &value);
            let update = async {
                loop {
                    match updates.recv().await {
                        Some(u) if u.0 == want as f64 => return u,
                        Some(_) => {}
                        None => fail(1, format!("{name}: the subscription ended")),
                    }
                }
            };
            let (put, update) =
                tokio::join!(put, tokio::time::timeout(Duration::from_secs(60), update));
            if let Err(e) = put {
                fail(1, format!("{name}: put of {size} elements: {e}"));
            }
            let Ok((_, length, severity, stamp, received)) = update else {
                fail(
                    1,
                    format!("{name}: no monitor update of the {size}-element put within 60 s"),
                )
            };
            if round >= 0 {
                let status = if length == size { 0 } else { BAD_LENGTH };
                store.add(
                    Sample {
                        pv: i as u32,
                        severity,
                        status,
                        value: received - t0,
                        stamp,
                        received,
                    },
                    Events::None,
                );
            }
        }
    }
    emit(&json!({"ev": "complete"}), None);
    commands.expect("ship").await;
    store.ship();
    drop(subscription);
}
