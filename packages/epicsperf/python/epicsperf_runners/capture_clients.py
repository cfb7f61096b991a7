"""The client libraries of the Python capture runner (capture_driver.py): each connects to
every PV, reads its metadata, adds it to the capture session and subscribes, its callbacks
calling session.on_update(index, value, ioc_time, receive_time, severity, status); start() sets
subscribed_at (time.monotonic()) to when its monitors began, the start of the capture's time.

pyepics: PV objects (libca), monitor DBE_VALUE|DBE_ALARM, callbacks on libca's threads; the
main thread polls libca while it waits. p4p: the thread Context (PV Access), one monitor per PV.
Neither library reports updates it dropped, so lost updates show as gaps only."""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from . import clients
from .runners.base import ca_status

if TYPE_CHECKING:
    from .capture_driver import Session

# Session.on_update: (index, value, IOC time, receive time, severity, status).
OnUpdate = Callable[[int, Any, float, float, int, int], None]

NATIVE = ("string", "short", "float", "enum", "char", "long", "double")


class Pyepics:
    LIBRARY = "pyepics"
    epics: Any = None

    @classmethod
    def load(cls) -> str:
        import epics
        cls.epics = epics
        version: str = epics.__version__
        return version

    def __init__(self, names: list[str], session: Session) -> None:
        self.names, self.session = names, session
        self.epics.ca.initialize_libca()
        self.pvs: list[Any] = []

    def start(self, timeout: float) -> list[str]:
        epics = self.epics
        mask = epics.dbr.DBE_VALUE | epics.dbr.DBE_ALARM
        # each PV's callback is there from its first update; updates that come before the PV's
        # group exists wait, and are written in order once it does
        self.gates = [Gate(self.session.on_update, i) for i in range(len(self.names))]
        self.subscribed_at = time.monotonic()  # monitors start as the PVs connect
        self.pvs = [epics.PV(n, form="time", auto_monitor=mask, connection_timeout=timeout, callback=g.callback)
                    for n, g in zip(self.names, self.gates)]
        missing: list[str] = []
        deadline = time.monotonic() + timeout
        for i, pv in enumerate(self.pvs):
            if not pv.wait_for_connection(timeout=max(0.01, deadline - time.monotonic())):
                missing.append(pv.pvname)
                self.session.skip(i, "not connected within the timeout")
                continue
            native = NATIVE[epics.ca.field_type(pv.chid)]
            if native == "string":
                self.session.skip(i, "a string PV (not captured in format version 1)")
                continue
            ctrl = pv.get_ctrlvars() or {}
            nelm = max(1, int(pv.nelm or 1))
            count = int(pv.count or nelm)
            meta: dict[str, Any] = {}
            if ctrl.get("units") not in (None, ""):
                meta["units"] = ctrl["units"]
            if ctrl.get("precision") is not None and native in ("float", "double"):
                meta["precision"] = int(ctrl["precision"])
            if native == "enum" and ctrl.get("enum_strs"):
                meta["enum_strings"] = list(ctrl["enum_strs"])
            self.session.add(i, native, nelm, nelm > 1 and count != nelm, **meta)
            self.gates[i].open(nelm > 1)
        return missing

    def wait(self, commands: queue.Queue[str], timeout: float) -> str:
        """The next command, polling libca until it comes (pyepics asks for it with callbacks)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return commands.get_nowait()
            except queue.Empty:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise queue.Empty
            self.epics.poll(evt=1.e-3, iot=min(0.01, left))

    def close(self) -> None:
        for pv in self.pvs:
            pv.clear_callbacks()
        self.epics.ca.finalize_libca()
        self.pvs = []


class Gate:
    """A pyepics callback that holds updates until its PV is in the file, then passes them on."""

    def __init__(self, on_update: OnUpdate, index: int) -> None:
        self.on_update, self.index = on_update, index
        self.lock = threading.Lock()
        self.held: list[tuple[Any, float, float, int | None, int | None]] = []
        self.is_array: bool | None = None

    def callback(self, value: Any = None, severity: int | None = 0, status: int | None = 0, timestamp: float = 0.0,
                 **_: Any) -> None:
        received = time.time()
        with self.lock:
            if self.is_array is None:
                self.held.append((value, timestamp, received, severity, status))
                return
            self.deliver(value, timestamp, received, severity, status)

    def deliver(self, value: Any, timestamp: float, received: float, severity: int | None, status: int | None) -> None:
        if self.is_array and not hasattr(value, "__len__"):
            value = [value]
        self.on_update(self.index, value, timestamp, received, int(severity or 0), int(status or 0))

    def open(self, is_array: bool) -> None:
        with self.lock:
            self.is_array = is_array
            for args in self.held:
                self.deliver(*args)
            self.held = []


P4P_TYPES = {"b": "char", "B": "char", "h": "short", "H": "short", "i": "long", "I": "long",
             "l": "double", "L": "double", "f": "float", "d": "double"}


class P4p:
    LIBRARY = "p4p"
    Context: Any = None

    @classmethod
    def load(cls) -> str:
        from p4p.client.thread import Context
        cls.Context = Context
        from importlib.metadata import version
        return version("p4p")

    def __init__(self, names: list[str], session: Session) -> None:
        self.names, self.session = names, session
        self.ctx = self.Context("pva")
        self.subs: list[Any] = []

    def start(self, timeout: float) -> list[str]:
        results = self.ctx.get(self.names, timeout=timeout, throw=False)
        self.subscribed_at = time.monotonic()  # the monitors follow the reads
        missing: list[str] = []
        for i, r in enumerate(results):
            if isinstance(r, Exception):
                missing.append(self.names[i])
                self.session.skip(i, f"not read: {r or type(r).__name__}")
                continue
            raw = r.raw
            code = raw.type()["value"]
            meta: dict[str, Any] = {}
            native: str | None
            if not isinstance(code, str):  # a structure: the NTEnum's value_t
                native, count, is_array = "enum", 1, False
                meta["enum_strings"] = list(raw["value.choices"])
            else:
                is_array = code.startswith("a")
                native = P4P_TYPES.get(code[-1])
                count = len(raw["value"]) if is_array else 1
            if native is None:
                self.session.skip(i, "a string PV (not captured in format version 1)")
                continue
            try:
                units = raw["display.units"]
                if units:
                    meta["units"] = units
                if native in ("float", "double"):
                    meta["precision"] = int(raw["display.precision"])
            except (KeyError, TypeError, ValueError):
                pass
            # PV Access gives no maximum length: an array is fixed at its first length
            self.session.add(i, native, max(1, count), False, **meta)
            self.subs.append(self.ctx.monitor(self.names[i], self._callback(i, native == "enum", is_array),
                                              notify_disconnect=False))
        return missing

    def _callback(self, index: int, is_enum: bool, is_array: bool) -> Callable[[Any], None]:
        on_update = self.session.on_update
        now = time.time

        def cb(value: Any) -> None:
            if isinstance(value, Exception):
                return
            received = now()
            raw = value.raw
            try:
                severity = raw["alarm.severity"]
                status = ca_status(raw["alarm.message"], raw["alarm.status"])
                stamp = raw["timeStamp.secondsPastEpoch"] + raw["timeStamp.nanoseconds"] * 1e-9
            except KeyError:
                severity, status, stamp = 0, 0, 0.0
            v = raw["value.index"] if is_enum else raw["value"]
            if is_array and not hasattr(v, "__len__"):
                v = [v]
            on_update(index, v, stamp, received, int(severity), int(status))

        return cb

    def wait(self, commands: queue.Queue[str], timeout: float) -> str:
        return commands.get(timeout=timeout)

    def close(self) -> None:
        for s in self.subs:
            s.close()
        self.subs = []
        self.ctx.close()


CLIENTS: dict[str, type[Pyepics] | type[P4p]] = {"pyepics": Pyepics, "p4p": P4p}
# clients.json is the list: a capture client declared there has its class here, and no other.
_DECLARED = clients.capture_clients("python")
if sorted(CLIENTS) != sorted(_DECLARED):
    raise RuntimeError(f"capture clients {sorted(CLIENTS)} are not those clients.json declares: {_DECLARED}")
