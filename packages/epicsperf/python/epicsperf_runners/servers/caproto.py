"""caproto's asyncio Channel Access server (pure Python), as caproto_ioc.py runs one, with its
PVs made for the sizes asked: ChannelDouble, ChannelInteger (DBR_LONG) arrays of int32 and
ChannelByte (DBR_CHAR, raw bytes, not a string) arrays of int8, in a pvdb served by
caproto.asyncio.server.Context on an event loop of its own thread. It reads EPICS_CA_SERVER_PORT
and EPICS_CAS_INTF_ADDR_LIST from the environment. post() hands `await pv.write(value,
timestamp=t)` to that loop (run_coroutine_threadsafe) and waits for it: the write stores the
value and queues the subscribers' updates, which the server's tasks send.

With --latency N, a PVGroup of prefix <P> adds two pvproperties to the pvdb: LATENCY:DOUBLE
(ChannelDouble) and LATENCY:CHAR (ChannelByte, DBR_CHAR), each of max_length N, one element 0 at
start. A client's put goes through the pvproperty's putter (caproto's put handler in app code),
which returns the value put: caproto then stores it (the elements put, as many as were put),
stamped with the clock at the write, and queues the subscribers' updates before it answers the put.

With --counters N, <P>CALC1..N are ChannelDoubles of value 1 stamped with the start time, sharing
one ChannelAlarm of MINOR severity, status HIGH. A tick, post_counters(), hands one coroutine to the
loop and waits for it: `await pv.write(value, timestamp=t, verify_value=False)` for each counter in
order (verify_value would check the value against the limits, none here, and clear the alarm).
<P>RAMP is one more such ChannelDouble (the same alarm); post_ramp() hands the loop its
`await pv.write(value, timestamp=t, verify_value=False)` (run_coroutine_threadsafe, one a post) and
waits for it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from typing import Any

from . import counter_names, latency_names, names, ramp_names

LIBRARY = "caproto"
PROTOCOLS = ("CA",)
caproto: Any = None
Context: Any = None


def load() -> str:
    global caproto, Context
    import caproto as lib
    from caproto.asyncio.server import Context as ctx
    caproto, Context = lib, ctx
    version: str = lib.__version__
    return version


class Server:
    def __init__(self) -> None:
        self.pvs: dict[str, Any] = {}
        self.counters: list[Any] = []
        self.ramp: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.thread: threading.Thread | None = None

    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int], latency: int,
              counters: int) -> None:
        import numpy
        # Beacons as EPICS base's servers send them: to the client address list (loopback here)
        # unless the server's own lists say otherwise (caproto would broadcast them).
        env = os.environ
        if "EPICS_CA_ADDR_LIST" in env:
            env.setdefault("EPICS_CAS_BEACON_ADDR_LIST", env["EPICS_CA_ADDR_LIST"])
        if "EPICS_CA_AUTO_ADDR_LIST" in env:
            env.setdefault("EPICS_CAS_AUTO_BEACON_ADDR_LIST", env["EPICS_CA_AUTO_ADDR_LIST"])
        if "EPICS_CA_REPEATER_PORT" in env:
            env.setdefault("EPICS_CAS_BEACON_PORT", env["EPICS_CA_REPEATER_PORT"])
        # A beacon refused (no repeater listening) is logged with its traceback at every beacon;
        # EPICS base's servers ignore it, and so does this one.
        logging.getLogger("caproto.ctx").addFilter(
            lambda record: not record.getMessage().startswith("Failed to send beacon"))
        for name, (kind, n) in names(prefix, int32_sizes, byte_sizes).items():
            if kind == "double":
                self.pvs[name] = caproto.ChannelDouble(value=0.0)
            elif kind == "int32":
                self.pvs[name] = caproto.ChannelInteger(value=numpy.zeros(n, dtype=numpy.int32), max_length=n)
            else:
                self.pvs[name] = caproto.ChannelByte(value=numpy.zeros(n, dtype=numpy.int8), max_length=n,
                                                     strip_null_terminator=False)
        if latency_names(prefix, latency):
            self.pvs.update(latency_group(prefix, latency).pvdb)
        minor_high = caproto.ChannelAlarm(status=caproto.AlarmStatus.HIGH, severity=caproto.AlarmSeverity.MINOR_ALARM)
        now = time.time()
        for name in counter_names(prefix, counters):
            self.pvs[name] = caproto.ChannelDouble(value=1.0, alarm=minor_high, timestamp=now)
            self.counters.append(self.pvs[name])
        for name in ramp_names(prefix, counters):
            self.pvs[name] = self.ramp = caproto.ChannelDouble(value=1.0, alarm=minor_high, timestamp=now)
        started = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self.loop = loop

        async def on_startup(_async_lib: Any) -> None:
            """Called once the TCP and UDP sockets are bound and the server's tasks made."""
            started.set()

        async def serve() -> None:
            # The context makes its queues in the running loop.
            await Context(self.pvs).run(startup_hook=on_startup)

        def run() -> None:
            try:
                asyncio.set_event_loop(loop)
                self.task = loop.create_task(serve())
                loop.run_until_complete(self.task)
            except BaseException as err:  # noqa: BLE001 - reported by start()
                failure.append(err)
            finally:
                started.set()

        self.thread = threading.Thread(target=run, name="caproto", daemon=True)
        self.thread.start()
        started.wait()
        if failure or not self.thread.is_alive():
            raise RuntimeError(f"the caproto server stopped: {failure[0] if failure else 'at start'}")

    def post(self, name: str, value: Any, t: float) -> None:
        assert self.loop is not None
        asyncio.run_coroutine_threadsafe(self.pvs[name].write(value, timestamp=t), self.loop).result()

    def post_counters(self, value: float, t: float) -> None:
        assert self.loop is not None

        async def tick() -> None:
            for pv in self.counters:
                await pv.write(value, timestamp=t, verify_value=False)
        asyncio.run_coroutine_threadsafe(tick(), self.loop).result()

    def post_ramp(self, value: float, t: float) -> None:
        assert self.loop is not None
        asyncio.run_coroutine_threadsafe(self.ramp.write(value, timestamp=t, verify_value=False), self.loop).result()

    def stop(self) -> None:
        loop, task = self.loop, self.task
        if loop is None or task is None or self.thread is None:
            return
        loop.call_soon_threadsafe(task.cancel)
        self.thread.join(1.0)


def latency_group(prefix: str, most: int) -> Any:
    """The round-trip PVs, a PVGroup whose putters publish the value put (returned, caproto
    writes it): float is PvpropertyDouble (DBR_DOUBLE), bytes PvpropertyByte (DBR_CHAR)."""
    import numpy
    from caproto.server import PVGroup, pvproperty

    async def echo(_group: Any, _instance: Any, value: Any) -> Any:
        return value

    class Latency(PVGroup):  # type: ignore[misc]
        double = pvproperty(name="LATENCY:DOUBLE", put=echo, dtype=float,
                            value=numpy.zeros(1, dtype=numpy.float64), max_length=most)
        char = pvproperty(name="LATENCY:CHAR", put=echo, dtype=bytes,
                          value=numpy.zeros(1, dtype=numpy.int8), max_length=most,
                          strip_null_terminator=False)

    return Latency(prefix)
