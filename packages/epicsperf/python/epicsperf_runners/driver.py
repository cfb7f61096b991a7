"""The shared driver of the Python runners: argv, the names file, stdin commands,
fd-3 events, the in-memory sample store and the binary sample payload (docs/runners.md).

    python -m epicsperf_runners.driver --client pyepics snapshot --names FILE [--timeout-ms N]
    python -m epicsperf_runners.driver --client caproto monitor --names FILE [--samples N]
    python -m epicsperf_runners.driver --client p4p array --names FILE [--samples N]

(with the folder that holds the package, packages/epicsperf/python, on PYTHONPATH).
Each client is a module of runners/ (named in clients.json) that exposes LIBRARY (the package
named when it is missing), load() -> version, and Client; it runs the tasks clients.json
declares for it, and no other.
A client that serves the array task has Client.array(store): see ArrayStore.
Only the chosen client's library is ever imported (by its load()): some cannot share a process.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import queue
import sys
import threading
import time
from array import array
from typing import IO, TYPE_CHECKING, Any, Callable, NoReturn

from . import put_tasks, samples
from .clients import python_clients, python_tasks

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    from .runners.base import Client

# --client name -> its module of runners/, as clients.json declares it (importing one imports no
# client library: its load() does)
CLIENTS = python_clients()
# --client name -> the tasks clients.json declares for it
TASKS = python_tasks()

_events: IO[bytes] | None = None
_events_lock = threading.Lock()


def emit(event: dict[str, Any], payload: bytes | None = None) -> None:
    """Write one JSON line on fd 3, followed by the payload bytes when given."""
    if payload is not None:
        event = dict(event, bytes=len(payload))
    data = (json.dumps(event, separators=(",", ":")) + "\n").encode()
    with _events_lock:
        _write_all(data)
        if payload is not None:
            _write_all(memoryview(payload))


def _write_all(data: ReadableBuffer) -> None:
    """Write every byte: a pipe may take a large payload in several writes."""
    assert _events is not None, "open_events() first"
    view = memoryview(data)
    while view:
        n = _events.write(view)
        view = view[n or 0:]


def fail(message: object, code: int = 1) -> NoReturn:
    try:
        emit({"ev": "error", "message": " ".join(str(message).split())})
    finally:
        os._exit(code)


def run_main(main: Callable[[list[str]], object]) -> None:
    """Run a driver's main on this process's arguments; any crash is one error event and exit 1."""
    try:
        main(sys.argv[1:])
    except SystemExit:
        raise
    except BaseException as err:  # noqa: BLE001 - report any crash as one line
        fail(f"{type(err).__name__}: {err}")


def open_events() -> None:
    global _events
    try:
        _events = os.fdopen(3, "wb", buffering=0)
    except OSError:
        print("driver.py: fd 3 is not open (the orchestrator opens it)", file=sys.stderr)
        sys.exit(2)


class Store:
    """The first `samples` updates of each PV, in preallocated arrays.

    add() is called from the client library's callbacks; it writes `connected`
    when every PV has delivered its first update and `complete` when every PV has
    its samples, then ignores further updates. `done` is set on completion.
    With events=False add() only stores (the put tasks write those events themselves).
    """

    def __init__(self, count: int, samples: int, events: bool = True) -> None:
        self.count = count
        self.samples = samples
        self.events = events
        size = count * samples
        self.counts = [0] * count
        self.severity = array("h", bytes(2 * size))
        self.status = array("h", bytes(2 * size))
        self.value = array("d", bytes(8 * size))
        self.stamp = array("d", bytes(8 * size))
        self.received = array("d", bytes(8 * size))
        self.started = 0
        self.finished = 0
        self.closed = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        if count == 0:
            self.done.set()

    def add(self, index: int, severity: int, status: int, value: float, stamp: float, received: float) -> None:
        with self.lock:
            c = self.counts[index]
            if c >= self.samples or self.closed:
                return
            k = index * self.samples + c
            self.severity[k] = severity
            self.status[k] = status
            self.value[k] = value
            self.stamp[k] = stamp
            self.received[k] = received
            self.counts[index] = c + 1
            if not self.events:
                return
            if c == 0:
                self.started += 1
                if self.started == self.count:
                    emit({"ev": "connected", "count": self.count})
            if c + 1 == self.samples:
                self.finished += 1
                if self.finished == self.count:
                    emit(self.complete_event())
                    self.done.set()

    def complete_event(self) -> dict[str, Any]:
        return {"ev": "complete"}

    def fail(self, message: str) -> NoReturn:
        """End the run with `message` (a library that drops updates with only a printed warning)."""
        fail(message)

    def close(self) -> int:
        """Stop storing (samples arriving later are dropped); returns the sample count."""
        with self.lock:
            self.closed = True
        return sum(self.counts)

    def pack(self) -> bytes:
        """The stored samples as records, grouped by PV (samples.py)."""
        return samples.pack(self.counts, self.samples, self.severity, self.status,
                            self.value, self.stamp, self.received)


class ArrayStore(Store):
    """The array task's store: one PV, one sample per update of a large array.

    add_array() takes the update's array as the library gives it (numpy array, list, any
    sequence) and looks at three elements: the first is the value, and the status holds the
    bits of the checks that failed (1: the middle element differs from the first, 2: the last
    does, 4: the length differs from the first update's, 8: with check_all, some element does).
    """

    def __init__(self, samples: int, check_all: bool = False) -> None:
        super().__init__(1, samples)
        self.elements = 0
        self.first_length = -1
        self.check_all = check_all

    def add_array(self, severity: int, values: Any, stamp: float, received: float) -> None:
        try:
            n = len(values)
        except TypeError:  # a one-element array given as a scalar
            values, n = (values,), 1
        if n == 0:
            self.add(0, severity, 4, math.nan, stamp, received)
            return
        if self.first_length < 0:
            self.first_length = n
        first = values[0]
        bad = ((values[n >> 1] != first) * 1 + (values[n - 1] != first) * 2
               + (n != self.first_length) * 4)
        if self.check_all and not bad & 8 and not all_equal(values, first):
            bad |= 8
        self.elements = n
        self.add(0, severity, int(bad), float(first), stamp, received)

    def complete_event(self) -> dict[str, Any]:
        return {"ev": "complete", "elements": self.elements}


def all_equal(values: Any, first: Any) -> bool:
    """Whether every element equals the first (numpy at once, else one by one)."""
    if hasattr(values, "dtype"):
        return bool((values == first).all())
    return all(v == first for v in values)


def read_names(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    except OSError as err:
        fail(f"cannot read --names {path}: {err.strerror}", 2)


def command_reader() -> queue.Queue[str]:
    """Commands from stdin, one word per line, on a queue. EOF: exit at once."""
    q: queue.Queue[str] = queue.Queue()

    def run() -> None:
        for line in sys.stdin:
            word = line.strip()
            if word:
                q.put(word)
        os._exit(0)

    threading.Thread(target=run, name="stdin", daemon=True).start()
    return q


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(message, 2)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = ArgumentParser(prog="driver.py")
    p.add_argument("--client", required=True, choices=CLIENTS)
    p.add_argument("task")
    p.add_argument("--names", required=True)
    p.add_argument("--timeout-ms", type=float)
    p.add_argument("--samples", type=int)
    p.add_argument("--check-all", action="store_true")
    p.add_argument("--elements", type=int)
    p.add_argument("--type")
    p.add_argument("--no-callback", action="store_true")
    p.add_argument("--sizes")
    args = p.parse_args(argv)
    if args.task not in TASKS[args.client]:
        fail(f"{args.client} does not serve the {args.task} task "
             f"(clients.json: {', '.join(TASKS[args.client])})", 2)
    # The harness passes every value the task needs: the runners keep no defaults.
    if args.task == "snapshot" and args.timeout_ms is None:
        fail("snapshot: --timeout-ms N is required", 2)
    if args.task != "snapshot" and args.samples is None:
        fail(f"{args.task}: --samples N is required", 2)
    if args.task == "array-put" and (args.elements is None or args.type is None):
        fail("array-put: --elements N and --type T are required", 2)
    if args.task == "latency":
        try:
            args.sizes = [int(s) for s in (args.sizes or "").split(",") if s]
        except ValueError:
            fail(f"latency: --sizes must be numbers, got {args.sizes}", 2)
        if not args.sizes:
            fail("latency: --sizes N,N,... is required", 2)
    return args


def expect(client: Client, commands: queue.Queue[str], word: str) -> None:
    got = client.wait_command(commands)
    if got != word:
        fail(f"expected '{word}', got '{got}'", 2)


def main(argv: list[str]) -> None:
    open_events()
    args = parse_args(argv)
    module = importlib.import_module(f".runners.{CLIENTS[args.client]}", __package__)
    try:
        version = module.load()
    except ImportError:
        fail(f"{module.LIBRARY} is not installed", 3)
    names = read_names(args.names)
    if args.task == "array":
        if not hasattr(module.Client, "array"):
            fail(f"{args.client} does not serve the array task", 2)
    if args.task in ("array-put", "latency"):
        if not hasattr(module.Client, "put_array"):
            fail(f"{args.client} does not serve the {args.task} task", 2)
        if len(names) != 1:
            fail(f"array: --names must hold one name, it holds {len(names)}", 2)
    commands = command_reader()
    try:
        client = module.Client(names)
    except Exception as err:  # noqa: BLE001 - any library failure ends the runner
        fail(f"{args.client}: cannot create the context: {err}")
    emit({"ev": "ready", "client": args.client, "version": str(version)})

    expect(client, commands, "start")
    store: Store
    if args.task == "snapshot":
        results = client.snapshot(args.timeout_ms / 1000.0, time.time())
        emit({"ev": "done"})
        expect(client, commands, "ship")
        emit({"ev": "results"}, json.dumps(results, separators=(",", ":"),
                                           allow_nan=False).encode())
    elif args.task == "array":
        store = ArrayStore(max(1, args.samples), args.check_all)
        client.array(store)
    elif args.task == "array-put":
        store = Store(1, max(1, args.samples), events=False)
        try:
            put_tasks.run_array_put(client, store, names[0], args.elements, args.type,
                                    not args.no_callback, getattr(module, "PROTOCOL", "CA"), emit)
        except put_tasks.NoPutWithoutCallback as err:
            fail(str(err))
    elif args.task == "latency":
        store = Store(len(args.sizes), max(1, args.samples), events=False)
        put_tasks.run_latency(client, store, names[0], args.sizes, args.type or "double", emit)
    elif args.task == "monitor":
        store = Store(len(names), max(1, args.samples))
        if names:
            client.monitor(store)
        else:
            emit({"ev": "connected", "count": 0})
            emit({"ev": "complete"})
    else:
        fail(f"the Python runner has no {args.task} task", 2)
    if args.task != "snapshot":
        expect(client, commands, "ship")
        count = store.close()
        emit({"ev": "samples", "count": count}, store.pack())
    expect(client, commands, "exit")
    try:
        client.close()
    finally:
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    run_main(main)
