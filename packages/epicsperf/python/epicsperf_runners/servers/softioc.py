"""pythonSoftIOC: builder records set from Python, served by EPICS base's RSRV (CA) and QSRV
(PV Access, pvxslibs' pvxsIoc), as the built-in IOC (ioc.py) serves its PVs.

An aIn for the double and a WaveformIn per array (int32: FTVL LONG, int8: FTVL CHAR), all
I/O Intr; post() is record.set(value, timestamp=t), which stores the value and asks EPICS to
process the record (scanIoRequest): the record takes it, with TIME = t, on EPICS's callback
thread, which posts the monitors. TSE = -2 keeps the time the device support writes (EPICS
would otherwise stamp the record with its own clock at processing). Before each post, before
it reads the clock, the driver calls wait_posted(): until the record has taken its previous post
(its VAL, or first element, read with dbGetField; long done when posts are 10 ms apart on an idle
machine). A set before the callback thread processed the last one would replace that value (the
device support keeps only the latest), and that post would never reach a client. Waiting after
the set instead would share the interpreter with the processing the crossing time measures.

With --latency N, <P>LATENCY:DOUBLE (FTVL DOUBLE) and <P>LATENCY:CHAR (FTVL CHAR) are WaveformOut
records (waveform, Python output device support) of NELM N (2 for N = 1: QSRV would serve one
element as a scalar), one element 0 at start. A client's put (RSRV's or QSRV's dbPut) writes the
elements and sets NORD to their count, and processes the record: the device support takes the
value (always_update: an on_update each put, even of the same value) and the record, stamped with
the clock (TSE 0), posts VAL and NORD to the monitors before the put completes (not blocking: the
on_update runs afterwards on the asyncio dispatcher).

With --counters N, <P>CALC1..N are aIn records (I/O Intr, TSE -2) whose first value (1, MINOR
alarm, status HIGH, the start time) is set before iocInit, which processes them (PINI). A tick,
post_counters(), is record.set(value, severity=MINOR, alarm=HIGH, timestamp=t) on each in order,
a processing request each on EPICS's callback queue (callbackSetQueueSize before iocInit: room for
every counter, where the default of 2000 would drop the rest), and then a wait until the last
counter has taken its value (its VAL read with dbGetField): the callback thread processes each
record in Python (the device support), so it can fall behind the sets, and a tick waits for it
rather than let the queue overflow.

<P>RAMP is one more such aIn. post_ramp() is its record.set(value, severity=MINOR, alarm=HIGH,
timestamp=t), and then the same wait as post()'s (VAL polled every 50 us), or the ramp would skip
a value. The ramp's rate is so bounded by a set's processing on the callback thread.
"""

from __future__ import annotations

import os
import time
from typing import Any

from . import counter_names, latency_names, names, ramp_names

LIBRARY = "softioc"
PROTOCOLS = ("CA", "PVA")
softioc: Any = None
builder: Any = None
asyncio_dispatcher: Any = None
alarm: Any = None
fields: Any = None
imports: Any = None
# How long a tick may wait for the last counter's processing (s) before the runner fails.
COUNTER_WAIT = 60.0
# How often post() and post_ramp() look whether the record has taken its value (s).
TAKEN_POLL = 0.00005


def load() -> str:
    global softioc, builder, asyncio_dispatcher, alarm, fields, imports
    import softioc as lib
    from softioc import alarm as a, asyncio_dispatcher as d, builder as b, fields as f, imports as i, softioc as ioc
    softioc, builder, asyncio_dispatcher, alarm, fields, imports = ioc, b, d, a, f, i
    version: str = lib.__version__
    return version


class Server:
    def __init__(self) -> None:
        self.records: dict[str, Any] = {}
        self.posted: dict[str, float] = {}  # each record's last post (its VAL, or first element)
        self.counters: list[Any] = []
        self.last = ""  # the last counter's name
        self.ramp: Any = None
        self.ramp_name = ""

    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int], latency: int,
              counters: int) -> None:
        import numpy
        pvs = names(prefix, int32_sizes, byte_sizes)
        # RSRV sends no array larger than EPICS_CA_MAX_ARRAY_BYTES (read at iocInit): room for the
        # largest, as ioc.py does.
        largest = max([4 * n for _, n in pvs.values()] + [8 * latency])
        need = max(16384, largest + 4096)
        try:
            have = int(os.environ.get("EPICS_CA_MAX_ARRAY_BYTES", "0"))
        except ValueError:
            have = 0
        if have < need:
            os.environ["EPICS_CA_MAX_ARRAY_BYTES"] = str(need)
        builder.SetDeviceName(prefix + "CROSS")
        cut = len(prefix) + len("CROSS:")
        for name, (kind, n) in pvs.items():
            if kind == "double":
                rec = builder.aIn(name[cut:], initial_value=0.0, TSE=-2)
            else:
                dtype = numpy.int32 if kind == "int32" else numpy.int8
                # QSRV serves a waveform of one element as a scalar: room for two, one used.
                rec = builder.WaveformIn(name[cut:], initial_value=numpy.zeros(n, dtype=dtype),
                                         length=max(n, 2), datatype=dtype, TSE=-2)
            self.records[name] = rec
        builder.SetDeviceName(prefix + "LATENCY")
        cut = len(prefix) + len("LATENCY:")
        for name, kind in latency_names(prefix, latency).items():
            ftvl = numpy.float64 if kind == "double" else numpy.int8
            builder.WaveformOut(name[cut:], initial_value=numpy.zeros(1, dtype=ftvl), length=max(latency, 2),
                                datatype=ftvl, always_update=True, on_update=self.on_put)
        builder.UnsetDevice()
        now = time.time()
        for name in counter_names(prefix, counters):
            rec = builder.aIn(name, initial_value=1.0, TSE=-2)
            rec.set(1.0, severity=alarm.MINOR_ALARM, alarm=alarm.HIGH_ALARM, timestamp=now)  # taken at PINI
            self.counters.append(rec)
            self.last = name
        for name in ramp_names(prefix, counters):
            self.ramp = builder.aIn(name, initial_value=1.0, TSE=-2)
            self.ramp.set(1.0, severity=alarm.MINOR_ALARM, alarm=alarm.HIGH_ALARM, timestamp=now)  # taken at PINI
            self.ramp_name = name
        builder.LoadDatabase()
        imports.callbackSetQueueSize(2000 + counters + 1)
        # The dispatcher runs out records' callbacks (there are none): asyncio, not cothread.
        softioc.iocInit(asyncio_dispatcher.AsyncioDispatcher())
        # With TSE = -2 the records processed at iocInit (PINI) have no time yet: give them one.
        now = time.time()
        for name, rec in self.records.items():
            rec.set(rec.get(), timestamp=now)

    def on_put(self, value: Any) -> None:
        """A round-trip PV's put handler: the record has already posted the value."""

    def wait_posted(self, name: str) -> None:
        """Until the record has taken its last post (the driver calls it before each post's clock)."""
        previous = self.posted.get(name)
        if previous is not None:
            self.wait_taken(name, previous, TAKEN_POLL)

    def post(self, name: str, value: Any, t: float) -> None:
        self.records[name].set(value, timestamp=t)
        self.posted[name] = float(value) if isinstance(value, float) else float(value[0])

    def post_counters(self, value: float, t: float) -> None:
        minor, high = alarm.MINOR_ALARM, alarm.HIGH_ALARM
        for rec in self.counters:
            rec.set(value, severity=minor, alarm=high, timestamp=t)
        self.wait_taken(self.last, value, 0.0005)

    def post_ramp(self, value: float, t: float) -> None:
        self.ramp.set(value, severity=alarm.MINOR_ALARM, alarm=alarm.HIGH_ALARM, timestamp=t)
        self.wait_taken(self.ramp_name, value, TAKEN_POLL)

    def wait_taken(self, name: str, value: float, poll: float) -> None:
        """Until the record `name` reads `value` (VAL, or its first element): the callback thread
        has processed the set. The runner fails after COUNTER_WAIT."""
        import numpy
        buffer = numpy.zeros(1, dtype=numpy.float64)
        deadline = time.monotonic() + COUNTER_WAIT
        while True:
            imports.db_get_field(name, fields.DBF_DOUBLE, buffer.ctypes.data, 1)
            if buffer[0] == value:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} has not taken its value within {COUNTER_WAIT:g} s")
            time.sleep(poll)

    def stop(self) -> None:
        """Nothing to do: epicsExit would run the IOC's exit hooks, which may block on server
        threads; the driver ends the process, which closes every socket."""
