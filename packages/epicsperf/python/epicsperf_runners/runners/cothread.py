"""cothread.catools: cooperative threads in the main thread over libca.

Snapshot: caget(names, format=FORMAT_TIME, timeout=t, throw=False), which reads every
name concurrently (one cothread each) and returns all results together, so every
entry's elapsedMs is the batch's. Monitor: camonitor(names, callback) with FORMAT_TIME
(library defaults otherwise). Array: camonitor(name, callback, format=FORMAT_TIME,
count=0) with DBE_VALUE|DBE_ALARM; cothread copies each update into a numpy array in
libca's callback and hands the newest to the scheduler (all_updates=False, its default).
While waiting for commands the scheduler keeps running:
stdin commands reach it through a ThreadedEventQueue.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from . import base

if TYPE_CHECKING:
    import queue

    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

LIBRARY = "cothread"
cothread: Any = None
catools: Any = None


def load() -> str:
    global cothread, catools
    import cothread as lib
    import cothread.catools as ca
    cothread = lib
    catools = ca
    version: str = lib.__version__
    return version


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.subscriptions: list[Any] = []
        self.inbox: Any = None

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        results = catools.caget(self.names, format=catools.FORMAT_TIME, timeout=timeout,
                                throw=False)
        return base.catools_results(results, base.elapsed_ms(t0))

    def monitor(self, store: Store) -> None:
        self.subscriptions = catools.camonitor(self.names, base.catools_updates(store),
                                               format=catools.FORMAT_TIME)

    def array(self, store: ArrayStore) -> None:
        self.subscriptions = [catools.camonitor(
            self.names[0], base.catools_array_updates(store), format=catools.FORMAT_TIME, count=0,
            events=catools.DBE_VALUE | catools.DBE_ALARM)]

    def wait_command(self, commands: queue.Queue[str]) -> str:
        if self.inbox is None:
            self.inbox = cothread.ThreadedEventQueue()
            inbox = self.inbox

            def forward() -> None:
                while True:
                    inbox.Signal(commands.get())

            threading.Thread(target=forward, name="commands", daemon=True).start()
        command: str = self.inbox.Wait()
        return command

    # array-put and latency (put_tasks.py): caput of a numpy array (wait=True for the
    # completion); camonitor for the client's own updates, whose callbacks run on the main
    # thread's cothread scheduler: wait_event yields to it until the driver's event is set.
    def put_connect(self, name: str) -> None:
        self.put_name = name
        catools.connect(name, timeout=10)

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        catools.caput(self.put_name, values, wait=callback, timeout=60)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        self.put_connect(name)
        self.seen = cothread.Event(auto_reset=True)
        now = time.time

        def on_value(value: Any) -> None:
            on_update(value, value.severity, value.timestamp, now())
            self.seen.Signal()

        self.subscriptions.append(catools.camonitor(name, on_value, format=catools.FORMAT_TIME,
                                                    count=0, events=catools.DBE_VALUE | catools.DBE_ALARM))

    def wait_event(self, event: threading.Event, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not event.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            try:
                self.seen.Wait(left)
            except cothread.Timedout:
                return False
        return True

    def close(self) -> None:
        for sub in self.subscriptions:
            sub.close()
