"""The built-in test IOC: EPICS base's own IOC (RSRV for CA, QSRV for PVA) via softioc.

Serves counters PREFIX:CALC<n>, correctness PVs under PREFIX:KIND:, and a large
waveform PREFIX:ARRAY of --array-type (every element of update k equals k, wrapped to the
type). Writing N to PREFIX:SKIP makes every counter skip N values at its next update, and N to
PREFIX:ARRAY:SKIP the array (a gap injected on the IOC side). PREFIX:RAMP counts up by 1 at
PREFIX:RAMP:RATE Hz (0 = still, the default), a rate clients set at run time by a put: the load
workload's ramping PV. --settings N adds PREFIX:SET:1..N, settings of mixed types that stay put
until written (save, compare and restore). Prints NAME=value lines for the
client environment, then `ready`; runs until SIGINT/SIGTERM, or until its parent goes away
(stdin EOF). A `stats` line on stdin is answered on stdout with `stats {json}`: the counter ticks,
PREFIX:RAMP's value and the array updates it published so far (array_stats.py).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import array_stats

if TYPE_CHECKING:
    from types import FrameType

EVENT_NAME = "epicsperf_tick"
# The highest rate PREFIX:RAMP is processed at (Hz): a put above it is clipped.
RAMP_MAX_HZ = 5000

# --array-type: (waveform FTVL, numpy dtype name, softioc DBF name).
ARRAY_TYPES = {
    "double": ("DOUBLE", "float64", "DBF_DOUBLE"),
    "float": ("FLOAT", "float32", "DBF_FLOAT"),
    "int64": ("INT64", "int64", "DBF_INT64"),
    "int32": ("LONG", "int32", "DBF_LONG"),
    "int16": ("SHORT", "int16", "DBF_SHORT"),
    "int8": ("CHAR", "int8", "DBF_CHAR"),
}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ioc.py")
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--name-style", choices=["plain", "padded"], required=True)
    p.add_argument("--array-elements", type=int, required=True)
    p.add_argument("--array-rate", required=True)
    p.add_argument("--array-type", choices=sorted(ARRAY_TYPES), default="double")
    p.add_argument("--latency-elements", type=int, default=0)
    p.add_argument("--settings", type=int, default=0,
                   help="settings records PREFIX:SET:1..N of mixed types (see settings_records)")
    p.add_argument("--ca-port", type=int, required=True)
    p.add_argument("--pva-port", type=int, required=True)
    p.add_argument("--pva-broadcast-port", type=int, required=True)
    p.add_argument("--repeater-port", type=int, required=True)
    p.add_argument("--listen", default="127.0.0.1",
                   help="address the servers bind: 127.0.0.1 (this host only, beacons to loopback), "
                        "an interface's address, or 0.0.0.0 (every interface, beacons by broadcast)")
    p.add_argument("--access-security", action="store_true",
                   help="load an access security file: KIND:GATED writable only while KIND:GATE is 1, "
                        "KIND:LOCKED never writable")
    p.add_argument("--watch-stdin", action="store_true",
                   help="exit when stdin reaches EOF (the parent is gone)")
    return p.parse_args(argv)


def die_with_parent() -> None:
    """Ask Linux to send SIGTERM to this process when the parent exits."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass


def counter_name(prefix: str, style: str, i: int) -> str:
    return f"{prefix}CALC{i:05d}" if style == "padded" else f"{prefix}CALC{i}"


def counter_indices(records: int, style: str) -> range:
    return range(0, records) if style == "padded" else range(1, records + 1)


# A settings record's type by its index i mod 5, and its waveform's length.
SETTING_KINDS = ("ao", "longout", "mbbo", "stringout", "waveform")
SETTING_STATES = ("Off", "On", "Standby", "Fault")
SETTING_ELEMENTS = 16


def setting_value(i: int) -> float | str | list[float]:
    """The value PREFIX:SET:i holds at start (an mbbo's is its state index)."""
    kind = SETTING_KINDS[i % 5]
    if kind == "ao":
        return 1 + i * 0.001
    if kind == "longout":
        return i
    if kind == "mbbo":
        return i % 4
    if kind == "stringout":
        return f"set {i}"
    return [i + k * 0.25 for k in range(SETTING_ELEMENTS)]


def db_text(args: argparse.Namespace) -> tuple[str, list[tuple[str, str, Sequence[Any]]]]:
    """The database, as EPICS .db text."""
    P = args.prefix
    K = P + "KIND:"
    out: list[str] = []
    # (name, ftvl, values): EPICS cannot load array fields before iocInit
    arrays: list[tuple[str, str, Sequence[Any]]] = []

    def wf(name: str, ftvl: str, values: Sequence[Any], nelm: int | None = None, **fields: str) -> None:
        rec("waveform", name, FTVL=q(ftvl), NELM=str(nelm or len(values)), **fields)
        arrays.append((name, ftvl, values))

    def rec(rtype: str, name: str, **fields: str) -> None:
        body = "".join(f'    field({k}, {v})\n' for k, v in fields.items())
        out.append(f'record({rtype}, "{name}") {{\n{body}}}\n')

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    # Gap injection: a client writes N to SKIP; the ticker then sets every counter's B to N for
    # one tick. No counter links to SKIP: 100,000 links to one record would merge their lock
    # sets one by one at iocInit, which takes minutes.
    rec("longout", P + "SKIP", VAL="0", PINI='"YES"')
    for i in counter_indices(args.records, args.name_style):
        # VAL counts up by exactly 1 each time the tick event is posted (plus B); HIGH=0 with
        # HSV=MINOR keeps every update in MINOR alarm (as in EPICSPyClientPerformance).
        rec("calc", counter_name(P, args.name_style, i), SCAN='"Event"', EVNT=q(EVENT_NAME),
            CALC='"VAL+1+B"', HIGH="0", HSV='"MINOR"', PREC="0", PINI='"YES"')

    # The ramping PV: processed by its own ticker at RAMP:RATE Hz (a put changes it at once), each
    # time counting up by 1, MINOR like the counters. Nothing scans it otherwise.
    rec("ao", P + "RAMP:RATE", VAL="0", DRVL="0", DRVH=str(RAMP_MAX_HZ), PREC="1", PINI='"YES"')
    rec("calc", P + "RAMP", CALC='"VAL+1"', HIGH="0", HSV='"MINOR"', PREC="0", PINI='"YES"')

    # One scalar per CA native type, with metadata for GR/CTRL checks.
    rec("stringout", K + "STRING", VAL=q("hello epics"), PINI='"YES"')
    wf(K + "SHORT", "SHORT", [-1234], EGU=q("cnt"), HOPR="1000", LOPR="-1000")
    wf(K + "FLOAT", "FLOAT", [1.5], EGU=q("V"), PREC="2", HOPR="10", LOPR="-10")
    rec("mbbo", K + "ENUM", ZRST=q("Off"), ONST=q("On"), TWST=q("Fault"), VAL="1", PINI='"YES"')
    wf(K + "CHAR", "UCHAR", [200])
    rec("longout", K + "LONG", VAL="42", EGU=q("counts"), HOPR="100", LOPR="-100",
        DRVH="1000", DRVL="-1000", HIHI="90", HIGH="80", LOW="-80", LOLO="-90",
        HHSV='"MAJOR"', HSV='"MINOR"', LSV='"MINOR"', LLSV='"MAJOR"', PINI='"YES"')
    rec("ao", K + "DOUBLE", VAL="3.14159", PREC="4", EGU=q("mm"), HOPR="10", LOPR="-10",
        DRVH="100", DRVL="-100", HIHI="9", HIGH="8", LOW="-8", LOLO="-9",
        HHSV='"MAJOR"', HSV='"MINOR"', LSV='"MINOR"', LLSV='"MAJOR"', PINI='"YES"')
    long_text = "A long string held in a char waveform, longer than the 40 characters of DBR_STRING."
    wf(K + "LONGSTRING", "CHAR", list(long_text.encode()) + [0], nelm=256)

    # A small array of each numeric type, values 0..9 scaled so they differ by type.
    small_arrays: dict[str, tuple[str, list[float]]] = {
        "CHAR": ("UCHAR", [i * 25 for i in range(10)]),
        "SHORT": ("SHORT", [i * -300 for i in range(10)]),
        "LONG": ("LONG", [i * 100000 for i in range(10)]),
        "FLOAT": ("FLOAT", [i * 0.5 for i in range(10)]),
        "DOUBLE": ("DOUBLE", [i * 1.25 for i in range(10)]),
    }
    for suffix, (ftvl, values) in small_arrays.items():
        wf(K + "ARR:" + suffix, ftvl, values)
    # Current length (NORD) 10 below the maximum 100: for count-0 (dynamic size) requests.
    wf(K + "DYN", "DOUBLE", [float(i) for i in range(10)], nelm=100)

    # Values at the edges.
    rec("ao", K + "NAN", VAL='"NaN"', PINI='"YES"')
    rec("ao", K + "INF", VAL='"Inf"', PINI='"YES"')
    rec("ao", K + "NINF", VAL='"-Inf"', PINI='"YES"')
    rec("longout", K + "LONGMAX", VAL="2147483647", PINI='"YES"')
    rec("longout", K + "LONGMIN", VAL="-2147483648", PINI='"YES"')
    wf(K + "SHORTMAX", "SHORT", [32767])
    wf(K + "SHORTMIN", "SHORT", [-32768])
    wf(K + "CHARMAX", "UCHAR", [255])
    rec("ao", K + "DBLMAX", VAL=repr(sys.float_info.max), PINI='"YES"')
    rec("stringout", K + "EMPTY", VAL='""', PINI='"YES"')
    rec("stringout", K + "STR39", VAL=q("0123456789abcdefghijklmnopqrstuvwxyzABC"), PINI='"YES"')
    # A put that completes 3 s late: the ao's forward link processes a seq record that waits 3 s
    # before its link (asynchronous meanwhile), and a put with completion waits for the whole
    # chain (an interrupted restore's target).
    rec("ao", K + "SLOW", VAL="1", PREC="1", FLNK=q(K + "SLOW:DELAY"))
    rec("seq", K + "SLOW:DELAY", SELM='"All"', DLY0="3", DOL0="1", LNK0=q(K + "SLOW:DONE"))
    rec("longout", K + "SLOW:DONE", VAL="0")
    if args.access_security:
        # Access security (see acf_text): clients may write GATED only while GATE is 1.
        rec("longout", K + "GATE", VAL="1", PINI='"YES"')
        rec("longout", K + "GATED", VAL="5", ASG='"GATED"', PINI='"YES"')
        # In group LOCKED (read only): no client may ever write it.
        rec("longout", K + "LOCKED", VAL="7", ASG='"LOCKED"', PINI='"YES"')

    # Settings: records that hold what a client last wrote (nothing scans them), of mixed types.
    states = {f: q(s) for f, s in zip(("ZRST", "ONST", "TWST", "THST"), SETTING_STATES)}
    for i in range(1, args.settings + 1):
        name = f"{P}SET:{i}"
        kind = SETTING_KINDS[i % 5]
        value: Any = setting_value(i)  # of the type its kind takes
        if kind == "ao":
            rec("ao", name, VAL=repr(value), PREC="3", EGU=q("mm"), PINI='"YES"')
        elif kind == "longout":
            rec("longout", name, VAL=str(value), PINI='"YES"')
        elif kind == "mbbo":
            rec("mbbo", name, **states, VAL=str(value), PINI='"YES"')
        elif kind == "stringout":
            rec("stringout", name, VAL=q(value), PINI='"YES"')
        else:
            wf(name, "DOUBLE", value, PINI='"YES"')

    # QSRV serves a waveform of one element as a scalar: the arrays below hold at least two, so
    # that over PV Access too a one-element array is an array whatever other sizes are asked for.
    def nelm(n: int) -> str:
        return str(max(n, 2))

    # The large array: every element of update k equals k.
    if args.array_elements > 0:
        ftvl = ARRAY_TYPES[args.array_type][0]
        rec("waveform", P + "ARRAY", FTVL=q(ftvl), NELM=nelm(args.array_elements))
        rec("longout", P + "ARRAY:SKIP", VAL="0", PINI='"YES"')
    # The latency workload's targets: a client puts an array and waits for its own update.
    if args.latency_elements > 0:
        rec("waveform", P + "LATENCY:DOUBLE", FTVL='"DOUBLE"', NELM=nelm(args.latency_elements))
        rec("waveform", P + "LATENCY:CHAR", FTVL='"UCHAR"', NELM=nelm(args.latency_elements))
    return "".join(out), arrays


def acf_text(args: argparse.Namespace) -> str:
    """Access security: full access everywhere but in group GATED, writable only while KIND:GATE
    is 1, and in group LOCKED, never writable."""
    return (
        "ASG(DEFAULT) {\n    RULE(1, WRITE)\n}\n"
        "ASG(GATED) {\n"
        f'    INPA("{args.prefix}KIND:GATE")\n'
        "    RULE(1, READ)\n"
        '    RULE(1, WRITE) {\n        CALC("A=1")\n    }\n'
        "}\n"
        "ASG(LOCKED) {\n    RULE(1, READ)\n}\n"
    )


def loopback_only(args: argparse.Namespace) -> bool:
    listen: str = args.listen
    return listen.startswith("127.")


def client_env(args: argparse.Namespace, max_array_bytes: int) -> dict[str, str]:
    """What a client needs to reach this IOC: on loopback, the address lists; otherwise only the
    ports (a client finds it by broadcast, the EPICS default)."""
    env = {
        "EPICS_CA_SERVER_PORT": str(args.ca_port),
        "EPICS_CA_REPEATER_PORT": str(args.repeater_port),
        "EPICS_CA_MAX_ARRAY_BYTES": str(max_array_bytes),
        "EPICS_PVA_SERVER_PORT": str(args.pva_port),
        "EPICS_PVA_BROADCAST_PORT": str(args.pva_broadcast_port),
    }
    if loopback_only(args):
        env.update({
            "EPICS_CA_ADDR_LIST": args.listen,
            "EPICS_CA_AUTO_ADDR_LIST": "NO",
            "EPICS_PVA_ADDR_LIST": args.listen,
            "EPICS_PVA_AUTO_ADDR_LIST": "NO",
        })
    return env


def server_env(args: argparse.Namespace, max_array_bytes: int) -> dict[str, str]:
    """Environment for the IOC's own servers: our ports, and the interface asked for (all for
    0.0.0.0). On loopback the host is set up as its clients are (the address lists name the
    loopback address, the automatic lists off); beacons are left at EPICS base's and pvxs's
    defaults, which follow those lists (unicast to 127.0.0.1). The rest of EPICS_* is the caller's."""
    env = {
        "EPICS_CA_SERVER_PORT": str(args.ca_port),
        "EPICS_CA_REPEATER_PORT": str(args.repeater_port),
        "EPICS_CA_MAX_ARRAY_BYTES": str(max_array_bytes),
        "EPICS_PVAS_SERVER_PORT": str(args.pva_port),
        "EPICS_PVAS_BROADCAST_PORT": str(args.pva_broadcast_port),
    }
    if args.listen != "0.0.0.0":
        env["EPICS_CAS_INTF_ADDR_LIST"] = args.listen
        env["EPICS_PVAS_INTF_ADDR_LIST"] = args.listen
    if loopback_only(args):
        for proto in ("CA", "PVA"):
            env.update({
                f"EPICS_{proto}_ADDR_LIST": args.listen,
                f"EPICS_{proto}_AUTO_ADDR_LIST": "NO",
            })
    return env


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    die_with_parent()
    # CA carries an int64 waveform as doubles: 8 bytes per element covers every type.
    max_array_bytes = max(16384, 8 * max(args.array_elements, args.latency_elements) + 4096)
    os.environ.update(server_env(args, max_array_bytes))

    # softioc and the EPICS libraries read the environment when imported and at iocInit.
    import numpy
    from softioc import asyncio_dispatcher, fields, softioc
    from softioc.imports import db_get_field, db_put_field_process, dbCore

    text, arrays = db_text(args)
    with tempfile.NamedTemporaryFile("w", suffix=".db", delete=False) as f:
        f.write(text)
        db_path = f.name
    try:
        softioc.dbLoadDatabase(db_path)
    finally:
        os.unlink(db_path)

    stats = array_stats.Stats()
    if args.array_elements > 0:
        # PREFIX:ARRAY:PUT, the array-put workload's target: each put is checked here.
        from softioc import builder
        # softioc's builder tables lack EPICS 7's INT64; its waveform device support itself
        # works from the numpy dtype and the record's FTVL, so the pair is added to the tables.
        builder.NumpyDtypeToDbf.setdefault("int64", "INT64")
        builder.DbfStringToNumpy.setdefault("INT64", "int64")
        builder.SetDeviceName(args.prefix + "ARRAY")
        builder.WaveformOut("PUT", length=args.array_elements, datatype=ARRAY_TYPES[args.array_type][1],
                            always_update=True, on_update=array_stats.PutChecker(stats, args))
        builder.LoadDatabase()

    # The access security file is read at iocInit; an INPA link is a CA link to this IOC itself.
    acf_path = None
    if args.access_security:
        with tempfile.NamedTemporaryFile("w", suffix=".acf", delete=False) as f:
            f.write(acf_text(args))
            acf_path = f.name
        dbCore.asSetFilename.argtypes = [ctypes.c_char_p]
        dbCore.asSetFilename(acf_path.encode())

    dispatcher = asyncio_dispatcher.AsyncioDispatcher()
    try:
        softioc.iocInit(dispatcher)
    finally:
        if acf_path:
            os.unlink(acf_path)

    dtypes = {"CHAR": (numpy.int8, fields.DBF_CHAR), "UCHAR": (numpy.uint8, fields.DBF_UCHAR),
              "SHORT": (numpy.int16, fields.DBF_SHORT), "LONG": (numpy.int32, fields.DBF_LONG),
              "FLOAT": (numpy.float32, fields.DBF_FLOAT), "DOUBLE": (numpy.float64, fields.DBF_DOUBLE)}
    for name, ftvl, values in arrays:
        dtype, dbf = dtypes[ftvl]
        data = numpy.array(values, dtype=dtype)
        db_put_field_process(name, dbf, data.ctypes.data, len(values), True)

    stop = threading.Event()

    # Counters: one named event per tick, posted on an absolute schedule so the rate does not drift.
    dbCore.eventNameToHandle.restype = ctypes.c_void_p
    dbCore.eventNameToHandle.argtypes = [ctypes.c_char_p]
    dbCore.postEvent.argtypes = [ctypes.c_void_p]
    tick_event = dbCore.eventNameToHandle(EVENT_NAME.encode())

    # The last counter is processed last on each tick: its value is the ticks the IOC processed.
    last_counter = counter_name(args.prefix, args.name_style, counter_indices(args.records, args.name_style)[-1])
    counter_buf = numpy.zeros(1, dtype=numpy.float64)

    def read_counter() -> float:
        db_get_field(last_counter, fields.DBF_DOUBLE, counter_buf.ctypes.data, 1)
        return float(counter_buf[0])
    stats.read_counter = read_counter

    counters = [counter_name(args.prefix, args.name_style, i) + ".B"
                for i in counter_indices(args.records, args.name_style)]
    counter_skip = args.prefix + "SKIP"
    skip_buf = numpy.zeros(1, dtype=numpy.int32)
    b_buf = numpy.zeros(1, dtype=numpy.float64)

    def set_b(n: int) -> None:
        """Every counter's B, without processing it."""
        b_buf[0] = n
        for name in counters:
            db_put_field_process(name, fields.DBF_DOUBLE, b_buf.ctypes.data, 1, False)

    def tick() -> None:
        db_get_field(counter_skip, fields.DBF_LONG, skip_buf.ctypes.data, 1)
        skip = int(skip_buf[0])
        if skip <= 0:
            dbCore.postEvent(tick_event)
            return
        # A gap: this tick adds `skip` more to every counter; B goes back to 0 once the last
        # counter (processed last) has its new value.
        before = read_counter()
        set_b(skip)
        skip_buf[0] = 0
        db_put_field_process(counter_skip, fields.DBF_LONG, skip_buf.ctypes.data, 1, False)
        dbCore.postEvent(tick_event)
        deadline = time.monotonic() + 5.0
        while read_counter() == before and time.monotonic() < deadline and not stop.is_set():
            time.sleep(0.001)
        set_b(0)

    def ticker() -> None:
        if args.rate <= 0:
            return
        period = 1.0 / args.rate
        next_t = time.monotonic() + period
        while not stop.is_set():
            delay = next_t - time.monotonic()
            if delay > 0 and stop.wait(delay):
                return
            tick()
            stats.ticked()
            next_t += period
            if next_t < time.monotonic() - 1.0:  # fell far behind (suspended): resynchronise
                next_t = time.monotonic() + period

    ramp = args.prefix + "RAMP"
    ramp_rate = args.prefix + "RAMP:RATE"
    ramp_buf = numpy.zeros(1, dtype=numpy.float64)

    def read_ramp() -> float:
        db_get_field(ramp, fields.DBF_DOUBLE, ramp_buf.ctypes.data, 1)
        return float(ramp_buf[0])
    stats.read_ramp = read_ramp

    def ramp_ticker() -> None:
        """Processes PREFIX:RAMP at PREFIX:RAMP:RATE Hz on an absolute schedule; reads the rate
        before each update, so a put takes effect at the next one (or within 50 ms from 0)."""
        rate_buf = numpy.zeros(1, dtype=numpy.float64)
        one = numpy.ones(1, dtype=numpy.int32)
        next_t = time.monotonic()
        while not stop.is_set():
            db_get_field(ramp_rate, fields.DBF_DOUBLE, rate_buf.ctypes.data, 1)
            rate = min(float(rate_buf[0]), RAMP_MAX_HZ)
            if not rate > 0:
                if stop.wait(0.05):
                    return
                next_t = time.monotonic()
                continue
            db_put_field_process(ramp + ".PROC", fields.DBF_LONG, one.ctypes.data, 1, True)
            next_t += 1.0 / rate
            delay = next_t - time.monotonic()
            if delay > 0:
                if stop.wait(delay):
                    return
            elif delay < -1.0:  # fell far behind: resynchronise
                next_t = time.monotonic()

    def array_updater() -> None:
        rate = args.array_rate
        if args.array_elements <= 0 or rate in ("0", "0.0"):
            return
        period = 0.0 if rate == "max" else 1.0 / float(rate)
        _ftvl, dtype_name, dbf_name = ARRAY_TYPES[args.array_type]
        dtype = numpy.dtype(dtype_name)
        dbf = getattr(fields, dbf_name)
        buf = numpy.empty(args.array_elements, dtype=dtype)
        name = args.prefix + "ARRAY"
        skip_name = name + ":SKIP"
        skip = numpy.zeros(1, dtype=numpy.int32)
        zero = numpy.zeros(1, dtype=numpy.int32)
        k = 0
        published = 0
        next_t = time.monotonic()
        while not stop.is_set():
            k += 1
            db_get_field(skip_name, fields.DBF_LONG, skip.ctypes.data, 1)
            if skip[0] > 0:  # a gap asked for by a client: skip that many updates, once
                k += int(skip[0])
                db_put_field_process(skip_name, fields.DBF_LONG, zero.ctypes.data, 1, False)
            # k wrapped to the element type (two's complement for the narrow integers).
            buf.fill(numpy.array(k, dtype=numpy.int64).astype(dtype))
            db_put_field_process(name, dbf, buf.ctypes.data, args.array_elements, True)
            published += 1  # updates sent, skipped values not counted
            stats.published(published)
            if period:
                next_t += period
                delay = next_t - time.monotonic()
                if delay > 0 and stop.wait(delay):
                    return
                if delay < -1.0:
                    next_t = time.monotonic()

    for fn in (ticker, ramp_ticker, array_updater):
        threading.Thread(target=fn, daemon=True).start()

    # The signal handler runs on the main thread and must take no lock (Event.set() from a handler
    # can deadlock against the interrupted main thread): it only raises a flag that is polled.
    stopping: list[object] = []  # why: "stdin closed" or the signal

    if args.watch_stdin:
        def watch() -> None:
            try:
                for line in sys.stdin:
                    if line.strip() == "stats":
                        stats.answer()
                    elif line.strip() == "reset-puts":
                        stats.reset_puts()
                        stats.answer()
            except Exception:
                pass
            stopping.append("stdin closed")
        threading.Thread(target=watch, daemon=True).start()

    def on_signal(sig: int, _frame: FrameType | None) -> None:
        stopping.append(sig)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    for k, v in client_env(args, max_array_bytes).items():
        print(f"{k}={v}")
    print("ready", flush=True)

    while not stopping:
        time.sleep(0.1)
    stop.set()
    sys.stdout.flush()
    sys.stderr.flush()
    # epicsExit runs the IOC's exit hooks, which may block on server threads; leave at once.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
