//! The runner protocol of epicsperf (docs/runners.md), shared by the Rust runners: the options,
//! the names file, the stdin commands, the events on fd 3, the 32-byte sample records and the
//! snapshot results. The binaries (src/bin/) hold what each client library does.

use std::fs::File;
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The fd the orchestrator opens for events.
const EVENTS_FD: i32 = 3;
/// One sample record: pv u32, severity i16, status i16, value f64, IOC time f64, receive time f64.
pub const SAMPLE_BYTES: usize = 32;
/// Latency rounds per size that are not kept: the first ones warm up the code paths.
pub const LATENCY_ROUNDS_NOT_KEPT: i64 = 3;
/// The array task's status bits (docs/runners.md): middle, last, length, any element.
pub const BAD_MIDDLE: i16 = 1;
pub const BAD_LAST: i16 = 2;
pub const BAD_LENGTH: i16 = 4;
pub const BAD_ELEMENT: i16 = 8;

static EVENTS: OnceLock<Mutex<File>> = OnceLock::new();

fn events() -> &'static Mutex<File> {
    EVENTS.get_or_init(|| {
        // SAFETY: fd 3 is the orchestrator's pipe, opened for this process and used only here.
        let file = unsafe { File::from_raw_fd(EVENTS_FD) };
        if file.metadata().is_err() {
            eprintln!("fd 3 is not open (the orchestrator opens it)");
            std::process::exit(2);
        }
        Mutex::new(file)
    })
}

/// One JSON event line, then `payload` when given (its length is in the line).
pub fn emit(event: &Value, payload: Option<&[u8]>) {
    let mut line = event.to_string();
    line.push('\n');
    let mut out = events().lock().unwrap_or_else(|e| e.into_inner());
    let ok =
        out.write_all(line.as_bytes()).is_ok() && payload.is_none_or(|p| out.write_all(p).is_ok());
    if !ok {
        std::process::exit(1); // the orchestrator is gone
    }
}

/// `{"ev":"error"}` with a one-line message, then exit with `code`.
pub fn fail(code: i32, message: impl AsRef<str>) -> ! {
    let message = message.as_ref().replace(['\n', '\r'], " ");
    emit(&json!({"ev": "error", "message": message}), None);
    std::process::exit(code);
}

pub fn emit_ready(client: &str, version: &str) {
    emit(
        &json!({"ev": "ready", "client": client, "version": version}),
        None,
    );
}

/// The wall clock, POSIX seconds.
pub fn wall_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Milliseconds since `t0` on the monotonic clock, to the microsecond.
pub fn elapsed_ms(t0: Instant) -> f64 {
    (t0.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

// ---- options and names -------------------------------------------------------------------

/// The command line of a runner: `<task> --names FILE [options]`.
#[derive(Debug, Default)]
pub struct Options {
    pub task: String,
    pub names: Vec<String>,
    pub timeout_ms: Option<f64>,
    pub samples: usize,
    pub check_all: bool,
    pub no_callback: bool,
    pub elements: usize,
    pub element_type: String,
    pub sizes: Vec<usize>,
}

impl Options {
    /// The process's arguments, checked as far as the task needs; a bad one fails with code 2.
    pub fn from_args() -> Options {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut o = Options {
            element_type: "double".into(),
            ..Options::default()
        };
        let Some(task) = args.first() else {
            fail(
                2,
                "usage: <runner> snapshot|monitor|array|array-put|latency --names FILE ...",
            )
        };
        o.task = task.clone();
        let mut names_file = None;
        let mut it = args[1..].iter();
        while let Some(a) = it.next() {
            let mut value = |what: &str| {
                it.next()
                    .cloned()
                    .unwrap_or_else(|| fail(2, format!("{a} needs {what}")))
            };
            let number = |s: String| {
                s.parse::<f64>()
                    .unwrap_or_else(|_| fail(2, format!("{a}: not a number: {s}")))
            };
            match a.as_str() {
                "--names" => names_file = Some(value("a file")),
                "--timeout-ms" => o.timeout_ms = Some(number(value("N"))),
                "--samples" => o.samples = number(value("N")) as usize,
                "--elements" => o.elements = number(value("N")) as usize,
                "--type" => o.element_type = value("a type"),
                "--check-all" => o.check_all = true,
                "--no-callback" => o.no_callback = true,
                "--sizes" => {
                    let list = value("N,N,...");
                    for s in list.split(',') {
                        match s.trim().parse::<usize>() {
                            Ok(n) if n >= 1 => o.sizes.push(n),
                            _ => fail(2, format!("--sizes must be positive numbers, got {list}")),
                        }
                    }
                }
                _ => fail(2, format!("unknown argument {a}")),
            }
        }
        let Some(file) = names_file else {
            fail(2, "--names FILE is required")
        };
        o.names = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| fail(2, format!("cannot read --names {file}: {e}")))
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        match o.task.as_str() {
            "snapshot" if o.timeout_ms.is_none() => fail(2, "snapshot: --timeout-ms N is required"),
            "snapshot" => {}
            w if o.samples < 1 => fail(2, format!("{w}: --samples N (at least 1) is required")),
            "array-put" if o.elements < 1 => fail(2, "array-put: --elements N is required"),
            "latency" if o.sizes.is_empty() => fail(2, "latency: --sizes N,N,... is required"),
            _ => {}
        }
        if matches!(o.task.as_str(), "array" | "array-put" | "latency") && o.names.len() != 1 {
            fail(
                2,
                format!(
                    "{}: --names must hold one name, it holds {}",
                    o.task,
                    o.names.len()
                ),
            );
        }
        o
    }
}

// ---- stdin commands ----------------------------------------------------------------------

/// The orchestrator's commands, one word a line, read on a thread of their own. The end of
/// stdin means the orchestrator is gone: the process exits at once, whatever it is doing.
pub struct Commands(mpsc::UnboundedReceiver<String>);

impl Commands {
    pub fn start() -> Commands {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let word = line.trim();
                if !word.is_empty() && tx.send(word.to_string()).is_err() {
                    return;
                }
            }
            std::process::exit(0);
        });
        Commands(rx)
    }

    /// Wait for `word`; any other command is an error.
    pub async fn expect(&mut self, word: &str) {
        match self.0.recv().await {
            Some(w) if w == word => {}
            Some(w) => fail(2, format!("expected '{word}', got '{w}'")),
            None => std::process::exit(0),
        }
    }
}

// ---- samples -----------------------------------------------------------------------------

#[derive(Clone, Copy, Default)]
pub struct Sample {
    pub pv: u32,
    pub severity: i16,
    pub status: i16,
    pub value: f64,
    pub stamp: f64,
    pub received: f64,
}

/// What a sample adds besides itself: the monitor and array tasks write `connected` and
/// `complete` when the counts reach them, the put-driven ones write their own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Events {
    Monitor,
    /// The array task: `complete` carries the length of the last update.
    Array {
        elements: usize,
    },
    None,
}

struct StoreInner {
    samples: Vec<Sample>,
    counts: Vec<usize>,
    started: usize,
    finished: usize,
    closed: bool,
}

/// Every sample of every PV, in memory until `ship`: the first `per_pv` of each.
pub struct Store {
    per_pv: usize,
    inner: Mutex<StoreInner>,
}

impl Store {
    pub fn new(pvs: usize, per_pv: usize) -> Store {
        Store {
            per_pv,
            inner: Mutex::new(StoreInner {
                samples: vec![Sample::default(); pvs * per_pv],
                counts: vec![0; pvs],
                started: 0,
                finished: 0,
                closed: false,
            }),
        }
    }

    pub fn add(&self, s: Sample, events: Events) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let i = s.pv as usize;
        let c = g.counts[i];
        if c >= self.per_pv || g.closed {
            return;
        }
        g.samples[i * self.per_pv + c] = s;
        g.counts[i] = c + 1;
        if events == Events::None {
            return;
        }
        let pvs = g.counts.len();
        if c == 0 {
            g.started += 1;
            if g.started == pvs {
                emit(&json!({"ev": "connected", "count": pvs}), None);
            }
        }
        if c + 1 == self.per_pv {
            g.finished += 1;
            if g.finished == pvs {
                match events {
                    Events::Array { elements } => {
                        emit(&json!({"ev": "complete", "elements": elements}), None)
                    }
                    _ => emit(&json!({"ev": "complete"}), None),
                }
            }
        }
    }

    /// Stop storing, then write every stored sample, PV by PV in the order received.
    pub fn ship(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.closed = true;
        let total: usize = g.counts.iter().sum();
        let mut out = Vec::with_capacity(total * SAMPLE_BYTES);
        for (i, &count) in g.counts.iter().enumerate() {
            for s in &g.samples[i * self.per_pv..i * self.per_pv + count] {
                out.extend_from_slice(&s.pv.to_le_bytes());
                out.extend_from_slice(&s.severity.to_le_bytes());
                out.extend_from_slice(&s.status.to_le_bytes());
                out.extend_from_slice(&s.value.to_le_bytes());
                out.extend_from_slice(&s.stamp.to_le_bytes());
                out.extend_from_slice(&s.received.to_le_bytes());
            }
        }
        emit(
            &json!({"ev": "samples", "count": total, "bytes": out.len()}),
            Some(&out),
        );
    }
}

// ---- the array task's checks -------------------------------------------------------------

/// The first element as a number and the check bits of one update (docs/runners.md): 1 the
/// middle element differs from the first, 2 the last does, 4 the array is empty, 8 some element
/// does (only with `check_all`). Three elements are looked at, every one with `check_all`.
pub fn check_array<T: Element>(a: &[T], check_all: bool) -> (f64, i16) {
    let Some(&first) = a.first() else {
        return (f64::NAN, BAD_LENGTH);
    };
    let mut bad = 0;
    if a[a.len() / 2] != first {
        bad |= BAD_MIDDLE;
    }
    if a[a.len() - 1] != first {
        bad |= BAD_LAST;
    }
    if check_all && a.iter().any(|&x| x != first) {
        bad |= BAD_ELEMENT;
    }
    (first.as_f64(), bad)
}

/// An array element the runners read as a number (int64 ones beyond 2^53 rounded, as every
/// runner's float64 sample does).
pub trait Element: Copy + PartialEq {
    fn as_f64(self) -> f64;
}

macro_rules! element {
    ($($t:ty),*) => { $(impl Element for $t { fn as_f64(self) -> f64 { self as f64 } })* };
}
element!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// The array task's per-update state: the first update's length, against which every
/// update's is checked.
#[derive(Default)]
pub struct ArrayCheck {
    first_length: Option<usize>,
}

impl ArrayCheck {
    /// The status bits of an update of `length` elements whose element checks gave `bad`.
    pub fn length(&mut self, length: usize, bad: i16) -> i16 {
        let first = *self.first_length.get_or_insert(length);
        if length != first {
            bad | BAD_LENGTH
        } else {
            bad
        }
    }
}

// ---- put values --------------------------------------------------------------------------

/// Every element of put k as the IOC checks it: k wrapped to the element type (the casts wrap
/// integers, as C's do).
pub fn wrap_i8(k: i64) -> i8 {
    k as i8
}
pub fn wrap_u8(k: i64) -> u8 {
    k as u8
}
pub fn wrap_i16(k: i64) -> i16 {
    k as i16
}
pub fn wrap_i32(k: i64) -> i32 {
    k as i32
}

// ---- snapshot results --------------------------------------------------------------------

/// A snapshot entry: what one PV answered, or why it did not.
pub enum Entry {
    Ok {
        value: Value,
        severity: i32,
        status: i32,
        stamp: f64,
        elapsed_ms: f64,
    },
    Failed {
        error: String,
        elapsed_ms: f64,
    },
}

/// A JSON number, `null` when it is not finite.
pub fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// An array value as JSON: one element is the number itself, as the C runners give it.
pub fn numbers<T: Element>(a: &[T]) -> Value {
    if a.len() == 1 {
        return number(a[0].as_f64());
    }
    Value::Array(a.iter().map(|&x| number(x.as_f64())).collect())
}

/// Write the snapshot's results: one entry per name, in the names' order.
pub fn ship_results(entries: &[Entry]) {
    let list: Vec<Value> = entries
        .iter()
        .map(|e| match e {
            Entry::Ok {
                value,
                severity,
                status,
                stamp,
                elapsed_ms,
            } => json!({
                "ok": true, "value": value, "severity": severity, "status": status,
                "timestamp": number(*stamp), "elapsedMs": number(*elapsed_ms),
            }),
            Entry::Failed { error, elapsed_ms } => {
                json!({"ok": false, "error": error, "elapsedMs": number(*elapsed_ms)})
            }
        })
        .collect();
    let body = Value::Array(list).to_string();
    emit(
        &json!({"ev": "results", "bytes": body.len()}),
        Some(body.as_bytes()),
    );
}

/// epicsAlarmConditionStrings: QSRV sends the CA alarm status as a PVA alarm.message.
const CA_STATUS: [&str; 22] = [
    "NO_ALARM",
    "READ",
    "WRITE",
    "HIHI",
    "HIGH",
    "LOLO",
    "LOW",
    "STATE",
    "COS",
    "COMM",
    "TIMEOUT",
    "HWLIMIT",
    "CALC",
    "SCAN",
    "LINK",
    "SOFT",
    "BAD_SUB",
    "UDF",
    "DISABLE",
    "SIMM",
    "READ_ACCESS",
    "WRITE_ACCESS",
];

/// The CA alarm status a PVA alarm.message names, else the PVA status.
pub fn ca_status(message: &str, fallback: i32) -> i32 {
    CA_STATUS
        .iter()
        .position(|s| *s == message)
        .map_or(fallback, |i| i as i32)
}
