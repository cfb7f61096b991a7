"""pythonSoftIOC: builder records set from Python, served by EPICS base's RSRV (CA) and QSRV
(PV Access, pvxslibs' pvxsIoc), as the built-in IOC (ioc.py) serves its PVs.

An aIn for the double and a WaveformIn per array (int32: FTVL LONG, int8: FTVL CHAR), all
I/O Intr; post() is record.set(value, timestamp=t), which stores the value and asks EPICS to
process the record (scanIoRequest): the record takes it, with TIME = t, on EPICS's callback
thread, which posts the monitors. TSE = -2 keeps the time the device support writes (EPICS
would otherwise stamp the record with its own clock at processing).
"""

from __future__ import annotations

import os
from typing import Any

from . import names

LIBRARY = "softioc"
PROTOCOLS = ("CA", "PVA")
softioc: Any = None
builder: Any = None
asyncio_dispatcher: Any = None


def load() -> str:
    global softioc, builder, asyncio_dispatcher
    import softioc as lib
    from softioc import asyncio_dispatcher as dispatcher, builder as b, softioc as ioc
    softioc, builder, asyncio_dispatcher = ioc, b, dispatcher
    version: str = lib.__version__
    return version


class Server:
    def __init__(self) -> None:
        self.records: dict[str, Any] = {}

    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int]) -> None:
        import time

        import numpy
        pvs = names(prefix, int32_sizes, byte_sizes)
        # RSRV sends no array larger than EPICS_CA_MAX_ARRAY_BYTES (read at iocInit): room for the
        # largest, as ioc.py does.
        largest = max(4 * n for _, n in pvs.values())
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
        builder.LoadDatabase()
        # The dispatcher runs out records' callbacks (there are none): asyncio, not cothread.
        softioc.iocInit(asyncio_dispatcher.AsyncioDispatcher())
        # With TSE = -2 the records processed at iocInit (PINI) have no time yet: give them one.
        now = time.time()
        for name, rec in self.records.items():
            rec.set(rec.get(), timestamp=now)

    def post(self, name: str, value: Any, t: float) -> None:
        self.records[name].set(value, timestamp=t)

    def stop(self) -> None:
        """Nothing to do: epicsExit would run the IOC's exit hooks, which may block on server
        threads; the driver ends the process, which closes every socket."""
