"""aioca (asyncio over libca) on one event loop kept by this runner.

Snapshot: the batch form caget(names, format=FORMAT_TIME, timeout=t, throw=False), which
runs one caget per name concurrently; the library returns all results together, so
every entry's elapsedMs is the batch's. Monitor: camonitor(names, callback) with
FORMAT_TIME; the callback gets (value, index). The loop runs while waiting for commands.
Array: camonitor(name, callback, format=FORMAT_TIME, count=0) with DBE_VALUE|DBE_ALARM;
aioca copies each update into a numpy array in libca's callback and hands the newest to the
loop (all_updates=False, its default: updates the loop has not reached are replaced).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from . import base

if TYPE_CHECKING:
    import queue
    import threading

    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

LIBRARY = "aioca"
aioca: Any = None


def load() -> str:
    global aioca
    import aioca as lib
    aioca = lib
    from aioca import _version
    version: str = getattr(_version, "__version__", getattr(_version, "version", "?"))
    return version



class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.subscriptions: list[Any] = []

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        results = self.loop.run_until_complete(aioca.caget(
            self.names, format=aioca.FORMAT_TIME, timeout=timeout, throw=False))
        return base.catools_results(results, base.elapsed_ms(t0))

    def monitor(self, store: Store) -> None:
        on_update = base.catools_updates(store)

        async def subscribe() -> Any:
            return aioca.camonitor(self.names, on_update, format=aioca.FORMAT_TIME,
                                   events=aioca.DBE_VALUE | aioca.DBE_ALARM)

        self.subscriptions = self.loop.run_until_complete(subscribe())

    def array(self, store: ArrayStore) -> None:
        on_update = base.catools_array_updates(store)

        async def subscribe() -> Any:
            return aioca.camonitor(self.names[0], on_update, format=aioca.FORMAT_TIME, count=0,
                                   events=aioca.DBE_VALUE | aioca.DBE_ALARM)

        self.subscriptions = [self.loop.run_until_complete(subscribe())]

    def wait_command(self, commands: queue.Queue[str]) -> str:
        return self.loop.run_until_complete(self.loop.run_in_executor(None, commands.get))

    # array-put and latency (put_tasks.py): caput of a numpy array (wait=True for the
    # completion) run on the loop; camonitor for the client's own updates, whose callbacks run
    # only while the loop does: wait_event runs it until the driver's event is set.
    def put_connect(self, name: str) -> None:
        self.put_name = name
        self.loop.run_until_complete(aioca.connect(name, timeout=10))

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        self.loop.run_until_complete(aioca.caput(self.put_name, values, wait=callback, timeout=60))

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        self.put_connect(name)
        self.seen = asyncio.Event()
        now = time.time

        def on_value(value: Any) -> None:
            on_update(value, value.severity, value.timestamp, now())
            self.seen.set()

        async def subscribe() -> Any:
            return aioca.camonitor(name, on_value, format=aioca.FORMAT_TIME, count=0,
                                   events=aioca.DBE_VALUE | aioca.DBE_ALARM)

        self.subscriptions.append(self.loop.run_until_complete(subscribe()))

    def wait_event(self, event: threading.Event, timeout: float) -> bool:
        async def until_set() -> bool:
            end = self.loop.time() + timeout
            while not event.is_set():
                left = end - self.loop.time()
                if left <= 0:
                    return False
                self.seen.clear()
                try:
                    await asyncio.wait_for(self.seen.wait(), left)
                except asyncio.TimeoutError:
                    return False
            return True
        return self.loop.run_until_complete(until_set())

    def close(self) -> None:
        for sub in self.subscriptions:
            sub.close()
        self.loop.run_until_complete(asyncio.sleep(0))
