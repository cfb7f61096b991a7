"""What every client module shares: the Client base (command waits, close) and the
snapshot result entries of docs/runners.md, with values made JSON-safe."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable, Union

if TYPE_CHECKING:
    import queue

    from ..driver import ArrayStore, Store

# A snapshot result entry (ok() or failed()), as JSON.
Entry = dict[str, Any]
# A value as JSON (json_value()).
Json = Union[str, int, float, None, list["Json"]]

# epicsAlarmConditionStrings, in CA status order: PVA servers (QSRV) send the CA
# status as alarm.message, so PVA clients map it back for a comparable status.
CA_STATUS = ("NO_ALARM", "READ", "WRITE", "HIHI", "HIGH", "LOLO", "LOW", "STATE", "COS",
             "COMM", "TIMEOUT", "HWLIMIT", "CALC", "SCAN", "LINK", "SOFT", "BAD_SUB",
             "UDF", "DISABLE", "SIMM", "READ_ACCESS", "WRITE_ACCESS")
_CA_STATUS_INDEX = {s: i for i, s in enumerate(CA_STATUS)}


def ca_status(message: str, fallback: int) -> int:
    """The CA alarm status named by a PVA alarm.message, else the PVA status."""
    return _CA_STATUS_INDEX.get(message, fallback)


def elapsed_ms(t0: float) -> float:
    return round((time.time() - t0) * 1000.0, 3)


def json_value(value: Any) -> Json:
    """A value as JSON: a number, a string or a list of numbers (non-finite -> null)."""
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f if math.isfinite(f) else None


def ok(value: Any, severity: int, status: int, timestamp: float, elapsed: float) -> Entry:
    return {"ok": True, "value": json_value(value), "severity": int(severity),
            "status": int(status), "timestamp": float(timestamp), "elapsedMs": elapsed}


def failed(error: object, elapsed: float) -> Entry:
    return {"ok": False, "error": " ".join(str(error).split()) or "failed", "elapsedMs": elapsed}


ECA_TIMEOUT = 80


def catools_results(results: Iterable[Any], elapsed: float) -> list[Entry]:
    """Result entries from the batch caget of cothread.catools or aioca (its augmented values:
    .ok, .severity, .status, .timestamp). Their timeout covers the connection, so a timeout
    there means no server answered the search within it."""
    out: list[Entry] = []
    for r in results:
        if r.ok:
            out.append(ok(r, r.severity, r.status, r.timestamp, elapsed))
        elif getattr(r, "errorcode", None) == ECA_TIMEOUT:
            out.append(failed("not found", elapsed))
        else:
            out.append(failed(str(r).split(": ", 1)[-1], elapsed))
    return out


def catools_updates(store: Store) -> Callable[[Any, int], None]:
    """The camonitor callback of cothread.catools and aioca (augmented values, with the
    index of the PV in the list) that records each update into the sample store."""
    add = store.add
    now = time.time

    def on_update(value: Any, index: int) -> None:
        add(index, value.severity, value.status, as_float(value), value.timestamp, now())

    return on_update


def catools_array_updates(store: ArrayStore) -> Callable[[Any], None]:
    """The same for the one waveform of the array task."""
    add = store.add_array
    now = time.time

    def on_update(value: Any) -> None:
        add(value.severity, value, value.timestamp, now())

    return on_update


def as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


class Client:
    """Base of the client modules. Subclasses take the names and create their context
    in __init__ (no channel work), and implement snapshot() and monitor()."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def snapshot(self, timeout: float, t0: float) -> list[Entry]:
        """Read every name once; one ok()/failed() entry per name, in order."""
        raise NotImplementedError

    def monitor(self, store: Store) -> None:
        """Subscribe to every name; callbacks call store.add(i, sev, stat, value, ts, now).
        Returns once subscribed; the driver then waits for `ship`."""
        raise NotImplementedError

    # A client that serves the array task defines array(store): subscribe to the one
    # name, whole array, TIME form, DBE_VALUE|DBE_ALARM; its callback calls
    # store.add_array(severity, values, timestamp, now) with the array as the library gives
    # it. Returns once subscribed.

    def wait_command(self, commands: queue.Queue[str]) -> str:
        """Block until the next stdin command; clients with their own event loop keep it running."""
        return commands.get()

    def close(self) -> None:
        pass
