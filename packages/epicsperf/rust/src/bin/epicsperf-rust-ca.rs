//! epicsperf-rust-ca: the runner of the rust-ca client, epics-ca-rs's CaClient (pure Rust Channel
//! Access, async on tokio). docs/runners.md describes the protocol.
//!
//!   epicsperf-rust-ca snapshot --names FILE --timeout-ms N
//!   epicsperf-rust-ca monitor --names FILE --samples N
//!   epicsperf-rust-ca array --names FILE --samples N [--check-all]
//!   epicsperf-rust-ca array-put --names FILE --samples N --elements E --type T [--no-callback]
//!   epicsperf-rust-ca latency --names FILE --samples N --sizes S1,S2,...
//!
//! One CaClient from the EPICS_CA_* environment. Snapshot: every channel created at once, then
//! per PV a task that waits for its connection and reads its native TIME type, all joined, each
//! under its own deadline. Monitor and array: a subscription per PV (native TIME type, the
//! server's current length, DBE_VALUE|DBE_ALARM), its updates taken by a task with
//! MonitorHandle::recv. The array task looks at three elements of the decoded array (every
//! one with --check-all). array-put puts in the channel's native type, with put_with_timeout
//! (WRITE_NOTIFY) or put_no_callback (WRITE); latency puts with put_no_callback and awaits its own
//! update on the subscription.

use std::sync::Arc;
use std::time::{Duration, Instant};

use epics_ca_rs::client::{CaChannel, CaClient, MonitorHandle};
use epics_ca_rs::protocol::{DBE_ALARM, DBE_VALUE};
use epics_ca_rs::{CaError, DbFieldType, EpicsValue};
use epicsperf_runners::{
    ArrayCheck, BAD_LENGTH, Commands, Entry, Events, LATENCY_ROUNDS_NOT_KEPT, Options, Sample,
    Store, check_array, elapsed_ms, emit, emit_ready, fail, number, numbers, ship_results,
    wall_now, wrap_i16, wrap_i32, wrap_u8,
};
use futures_util::future::join_all;
use serde_json::{Value, json};

const CLIENT: &str = "rust-ca";
/// The version Cargo.toml pins (epics-ca-rs has no version constant of its own).
const VERSION: &str = "0.33.0";

#[tokio::main]
async fn main() {
    let o = Options::from_args();
    let mut commands = Commands::start();
    let client = CaClient::new()
        .await
        .unwrap_or_else(|e| fail(1, format!("cannot create a CA client: {e}")));
    emit_ready(CLIENT, VERSION);
    match o.task.as_str() {
        "snapshot" => snapshot(&client, &o, &mut commands).await,
        "monitor" => monitor(&client, &o, &mut commands).await,
        "array" => array(&client, &o, &mut commands).await,
        "array-put" => array_put(&client, &o, &mut commands).await,
        "latency" => latency(&client, &o, &mut commands).await,
        w => fail(2, format!("unknown task {w}")),
    }
    commands.expect("exit").await;
    client.shutdown().await;
}

/// The update's IOC timestamp, POSIX seconds.
macro_rules! stamp {
    ($snap:expr) => {
        $snap.timestamp.since_unix_epoch().as_secs_f64()
    };
}

// ---- snapshot ----------------------------------------------------------------------------

/// A value as the snapshot's JSON: a number, a string, or an array of numbers.
fn json_value(v: &EpicsValue) -> Value {
    match v {
        EpicsValue::String(s) => Value::String(s.as_str_lossy().into_owned()),
        EpicsValue::DoubleArray(a) => numbers(a),
        EpicsValue::FloatArray(a) => numbers(a),
        EpicsValue::LongArray(a) => numbers(a),
        EpicsValue::ShortArray(a) => numbers(a),
        EpicsValue::CharArray(a) | EpicsValue::UCharArray(a) => numbers(a),
        EpicsValue::EnumArray(a) => numbers(a),
        EpicsValue::StringArray(a) => a.first().map_or(Value::Null, |s| {
            Value::String(s.as_str_lossy().into_owned())
        }),
        other => number(other.to_f64().unwrap_or(f64::NAN)),
    }
}

fn error_text(e: &CaError) -> String {
    match e {
        CaError::Timeout => "timeout".into(),
        CaError::Disconnected => "disconnected".into(),
        e => e.to_string(),
    }
}

/// One PV: connect, then read its native TIME type, both before `deadline`.
async fn read_one(ch: CaChannel, timeout: Duration, t0: Instant) -> Entry {
    let deadline = tokio::time::Instant::from_std(t0 + timeout);
    let failed = |error: String| Entry::Failed {
        error,
        elapsed_ms: elapsed_ms(t0),
    };
    match tokio::time::timeout_at(deadline, ch.wait_connected(timeout)).await {
        Ok(Ok(())) => {}
        _ => return failed("not found".into()),
    }
    let dbr = match ch.native_field_type() {
        Ok(t) => t.time_dbr_type(),
        Err(e) => return failed(error_text(&e)),
    };
    match tokio::time::timeout_at(deadline, ch.get_with_dbr_type(dbr, 0u32, timeout)).await {
        Err(_) => failed("timeout".into()),
        Ok(Err(e)) => failed(error_text(&e)),
        Ok(Ok(snap)) => Entry::Ok {
            value: json_value(&snap.value),
            severity: i32::from(snap.alarm.severity),
            status: i32::from(snap.alarm.status),
            stamp: stamp!(snap),
            elapsed_ms: elapsed_ms(t0),
        },
    }
}

async fn snapshot(client: &CaClient, o: &Options, commands: &mut Commands) {
    let timeout = Duration::from_secs_f64(o.timeout_ms.unwrap_or(0.0) / 1000.0);
    commands.expect("start").await;
    let t0 = Instant::now();
    let channels: Vec<CaChannel> = o.names.iter().map(|n| client.create_channel(n)).collect();
    let entries = join_all(channels.iter().map(|ch| read_one(ch.clone(), timeout, t0))).await;
    emit(&json!({"ev": "done"}), None);
    commands.expect("ship").await;
    ship_results(&entries);
}

// ---- monitor -----------------------------------------------------------------------------

/// A subscription of the channel's native TIME type, the server's current length, on value and
/// alarm events.
async fn subscribe(ch: &CaChannel, name: &str) -> MonitorHandle {
    ch.subscribe_with_mask_autosize(0.0, DBE_VALUE | DBE_ALARM)
        .await
        .unwrap_or_else(|e| fail(1, format!("{name}: {e}")))
}

async fn monitor(client: &CaClient, o: &Options, commands: &mut Commands) {
    let store = Arc::new(Store::new(o.names.len(), o.samples));
    commands.expect("start").await;
    let mut channels = Vec::new();
    for (i, name) in o.names.iter().enumerate() {
        let ch = client.create_channel(name);
        let mut sub = subscribe(&ch, name).await;
        channels.push(ch);
        let store = store.clone();
        tokio::spawn(async move {
            while let Some(update) = sub.recv().await {
                let received = wall_now();
                // A disconnection arrives as an error; the subscription resumes on reconnection.
                let Ok(snap) = update else { continue };
                store.add(
                    Sample {
                        pv: i as u32,
                        severity: snap.alarm.severity as i16,
                        status: snap.alarm.status as i16,
                        value: snap.value.to_f64().unwrap_or(f64::NAN),
                        stamp: stamp!(snap),
                        received,
                    },
                    Events::Monitor,
                );
            }
        });
    }
    if o.names.is_empty() {
        emit(&json!({"ev": "connected", "count": 0}), None);
        emit(&json!({"ev": "complete"}), None);
    }
    commands.expect("ship").await;
    store.ship();
}

// ---- array -------------------------------------------------------------------------------

/// The first element and check bits of an update, in the array's own element type.
fn check_value(v: &EpicsValue, check_all: bool) -> Option<(f64, i16, usize)> {
    let (first, bad) = match v {
        EpicsValue::DoubleArray(a) => check_array(a, check_all),
        EpicsValue::FloatArray(a) => check_array(a, check_all),
        EpicsValue::LongArray(a) => check_array(a, check_all),
        EpicsValue::ShortArray(a) => check_array(a, check_all),
        EpicsValue::CharArray(a) | EpicsValue::UCharArray(a) => check_array(a, check_all),
        EpicsValue::EnumArray(a) => check_array(a, check_all),
        // One element arrives as a scalar; CA's char is unsigned.
        EpicsValue::Char(c) | EpicsValue::UChar(c) => return Some((f64::from(*c), 0, 1)),
        v if !v.is_array() => return v.to_f64().map(|x| (x, 0, 1)),
        _ => return None,
    };
    Some((first, bad, v.count() as usize))
}

async fn array(client: &CaClient, o: &Options, commands: &mut Commands) {
    let store = Arc::new(Store::new(1, o.samples));
    let name = o.names[0].clone();
    let check_all = o.check_all;
    commands.expect("start").await;
    let ch = client.create_channel(&name);
    let mut sub = subscribe(&ch, &name).await;
    let task_store = store.clone();
    tokio::spawn(async move {
        let mut check = ArrayCheck::default();
        while let Some(update) = sub.recv().await {
            let received = wall_now();
            let snap = match update {
                Ok(s) => s,
                Err(CaError::Disconnected) => continue,
                Err(e) => fail(1, format!("{name}: {e}")),
            };
            let Some((first, bad, length)) = check_value(&snap.value, check_all) else {
                fail(
                    1,
                    format!("{name}: not a numeric array: {:?}", snap.value.dbr_type()),
                )
            };
            let sample = Sample {
                pv: 0,
                severity: snap.alarm.severity as i16,
                status: check.length(length, bad),
                value: first,
                stamp: stamp!(snap),
                received,
            };
            task_store.add(sample, Events::Array { elements: length });
        }
    });
    commands.expect("ship").await;
    store.ship();
    drop(ch);
}

// ---- array-put and latency ---------------------------------------------------------------

async fn connect(client: &CaClient, name: &str) -> (CaChannel, DbFieldType) {
    let ch = client.create_channel(name);
    if let Err(e) = ch.wait_connected(Duration::from_secs(10)).await {
        fail(1, format!("{name}: not found ({e})"));
    }
    let t = ch
        .native_field_type()
        .unwrap_or_else(|e| fail(1, format!("{name}: {e}")));
    (ch, t)
}

/// `n` elements of the channel's native type, each `k` wrapped to it (CA's char is unsigned).
fn filled(t: DbFieldType, n: usize, k: i64) -> EpicsValue {
    match t {
        DbFieldType::Float => EpicsValue::FloatArray(vec![k as f32; n].into()),
        DbFieldType::Long => EpicsValue::LongArray(vec![wrap_i32(k); n].into()),
        DbFieldType::Short => EpicsValue::ShortArray(vec![wrap_i16(k); n].into()),
        DbFieldType::Char => EpicsValue::CharArray(vec![wrap_u8(k); n].into()),
        _ => EpicsValue::DoubleArray(vec![k as f64; n].into()),
    }
}

async fn array_put(client: &CaClient, o: &Options, commands: &mut Commands) {
    let store = Store::new(1, o.samples);
    let name = &o.names[0];
    commands.expect("start").await;
    let (ch, t) = connect(client, name).await;
    emit(&json!({"ev": "connected", "count": 1}), None);
    for k in 1..=o.samples as i64 {
        let value = filled(t, o.elements, k);
        let t0 = wall_now();
        let result = if o.no_callback {
            ch.put_no_callback(&value)
        } else {
            ch.put_with_timeout(&value, Duration::from_secs(60)).await
        };
        let sample = Sample {
            pv: 0,
            status: i16::from(result.is_err()),
            value: k as f64,
            stamp: t0,
            ..Sample::default()
        };
        store.add(
            Sample {
                received: wall_now(),
                ..sample
            },
            Events::None,
        );
    }
    emit(&json!({"ev": "complete", "elements": o.elements}), None);
    commands.expect("ship").await;
    store.ship();
}

async fn latency(client: &CaClient, o: &Options, commands: &mut Commands) {
    let store = Store::new(o.sizes.len(), o.samples);
    let name = &o.names[0];
    commands.expect("start").await;
    let (ch, t) = connect(client, name).await;
    let mut sub = subscribe(&ch, name).await;
    match tokio::time::timeout(Duration::from_secs(30), sub.recv()).await {
        Ok(Some(Ok(_))) => {}
        _ => fail(1, format!("{name}: no first monitor update")),
    }
    emit(&json!({"ev": "connected", "count": 1}), None);
    let mut counter: i64 = 0;
    for (i, &size) in o.sizes.iter().enumerate() {
        for round in -LATENCY_ROUNDS_NOT_KEPT..o.samples as i64 {
            let want = counter % 250 + 1;
            counter += 1;
            let value = filled(t, size, want);
            let t0 = wall_now();
            if let Err(e) = ch.put_no_callback(&value) {
                fail(1, format!("{name}: put of {size} elements: {e}"));
            }
            // This put's own update: the first whose first element is the value put.
            let wait = async {
                loop {
                    match sub.recv().await {
                        Some(Ok(snap)) => {
                            let received = wall_now();
                            if let Some((first, _, length)) = check_value(&snap.value, false)
                                && first == want as f64
                            {
                                return (snap, received, length);
                            }
                        }
                        Some(Err(_)) => {}
                        None => fail(1, format!("{name}: the subscription ended")),
                    }
                }
            };
            let Ok((snap, received, length)) =
                tokio::time::timeout(Duration::from_secs(60), wait).await
            else {
                fail(
                    1,
                    format!("{name}: no monitor update of the {size}-element put within 60 s"),
                )
            };
            if round >= 0 {
                let sample = Sample {
                    pv: i as u32,
                    severity: snap.alarm.severity as i16,
                    status: if length == size { 0 } else { BAD_LENGTH },
                    value: received - t0,
                    stamp: stamp!(snap),
                    received,
                };
                store.add(sample, Events::None);
            }
        }
    }
    emit(&json!({"ev": "complete"}), None);
    commands.expect("ship").await;
    store.ship();
}
