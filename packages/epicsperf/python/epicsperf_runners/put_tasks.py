"""The put-driven tasks of the Python runners (docs/runners.md): array-put and latency.

A client module that serves them gives its Client three methods:
  put_connect(name)                   connect the channel (blocking), before the clock starts;
  put_array(values, callback)         put a numpy array; with callback=True wait for completion;
  latency_monitor(name, on_update)    subscribe; call on_update(values, severity, stamp, received).
A client that cannot put without completion raises NoPutWithoutCallback from put_array.
A client whose callbacks run only while its own loop runs on the main thread (aioca, cothread)
also gives wait_event(event, timeout): run that loop until the threading.Event is set.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    import numpy.typing as npt

    from .driver import Store

# The callback of latency_monitor: (values, severity, IOC time, receive time).
OnUpdate = Callable[[Any, int, float, float], None]
# driver.emit, as the tasks call it.
Emit = Callable[[dict[str, Any]], None]

ROUNDS_NOT_KEPT = 3  # per latency size: the first rounds warm up the code paths


class NoPutWithoutCallback(Exception):
    pass


class PutClient(Protocol):
    """What the put tasks call of a client module's Client."""

    def put_connect(self, name: str) -> None: ...

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None: ...

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None: ...


def put_value(k: int, type_: str, protocol: str) -> int:
    """Every element of put k, as the IOC checks it: k wrapped to the type (an unsigned byte over CA)."""
    if type_ == "int8":
        u = k % 256
        return u if protocol == "CA" or u < 128 else u - 256
    if type_ == "int16":
        u = k % 65536
        return u - 65536 if u >= 32768 else u
    return k


def put_dtype(type_: str, protocol: str) -> str:
    """The numpy dtype a client puts for an element type: CA has no int64 (the IOC takes doubles)
    and its DBR_CHAR is unsigned."""
    if protocol == "CA":
        return {"int64": "float64", "int8": "uint8"}.get(type_, _DTYPES[type_])
    return _DTYPES[type_]


_DTYPES = {"double": "float64", "float": "float32", "int64": "int64", "int32": "int32",
           "int16": "int16", "int8": "int8", "char": "uint8"}


def run_array_put(client: PutClient, store: Store, name: str, elements: int, type_: str, callback: bool,
                  protocol: str, emit: Emit) -> None:
    import numpy
    client.put_connect(name)
    buf = numpy.empty(elements, dtype=put_dtype(type_, protocol))
    emit({"ev": "connected", "count": 1})
    now = time.time
    for k in range(1, store.samples + 1):
        buf.fill(put_value(k, type_, protocol))
        t0 = now()
        try:
            client.put_array(buf, callback)
            status = 0
        except NoPutWithoutCallback:
            raise
        except Exception:  # noqa: BLE001 - a failed put is counted, the loop goes on
            status = 1
        store.add(0, 0, status, float(k), t0, now())
    emit({"ev": "complete", "elements": elements})


def run_latency(client: PutClient, store: Store, name: str, sizes: Sequence[int], type_: str, emit: Emit) -> None:
    """Per size: put an array filled with a fresh value, wait for the client's own monitor update
    that carries it. Sample: pv = size index, value = round trip (s), IOC time, receive time."""
    import numpy
    lock = threading.Lock()
    arrived = threading.Event()
    # want: the value awaited (None: none); got: (received, severity, stamp, length) of its update
    state: dict[str, Any] = {"want": None, "got": None, "first": threading.Event()}

    def on_update(values: Any, severity: int, stamp: float, received: float) -> None:
        state["first"].set()
        with lock:
            want = state["want"]
            if want is None:
                return
            try:
                n = len(values)
                first = values[0] if n else None
            except TypeError:
                n, first = 1, values
            if first == want:
                state["want"] = None
                state["got"] = (received, severity, stamp, n)
                arrived.set()

    wait: Callable[[threading.Event, float], bool] = (getattr(client, "wait_event", None)
                                                      or (lambda event, timeout: event.wait(timeout)))
    client.latency_monitor(name, on_update)
    if not wait(state["first"], 30):
        raise RuntimeError(f"{name}: no first monitor update within 30 s")
    emit({"ev": "connected", "count": 1})
    counter = 0
    dtype = "uint8" if type_ == "char" else "float64"
    for i, size in enumerate(sizes):
        buf = numpy.empty(size, dtype=dtype)
        for rnd in range(-ROUNDS_NOT_KEPT, store.samples):
            value = counter % 250 + 1
            counter += 1
            buf.fill(value)
            arrived.clear()
            with lock:
                state["want"] = value
            t0 = time.time()
            client.put_array(buf, False)
            if not wait(arrived, 60):
                raise RuntimeError(f"{name}: no monitor update of the {size}-element put within 60 s")
            received, severity, stamp, n = state["got"]
            if rnd >= 0:
                store.add(i, severity, 0 if n == size else 4, received - t0, stamp, received)
    emit({"ev": "complete"})
