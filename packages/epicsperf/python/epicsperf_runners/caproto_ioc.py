"""A small caproto IOC (an independent CA server) serving PVs of the same kinds as the built-in IOC.

Used by the client's cross-server tests. Listens on 127.0.0.1 only, on EPICS_CA_SERVER_PORT.
Prints `ready` once serving; exits when stdin closes (its parent is gone) or on SIGTERM.
"""

import os
import signal
import sys
import threading
from typing import Any

from caproto import ChannelType
from caproto.server import PVGroup, pvproperty, run


class Kinds(PVGroup):  # type: ignore[misc]  # caproto ships no types: PVGroup is Any
    DOUBLE = pvproperty(value=3.25, dtype=float, precision=3, units="mm",
                        upper_ctrl_limit=100.0, lower_ctrl_limit=-100.0,
                        upper_disp_limit=10.0, lower_disp_limit=-10.0)
    LONG = pvproperty(value=42, dtype=int, units="counts")
    STRING = pvproperty(value="hello caproto", dtype=ChannelType.STRING)
    ENUM = pvproperty(value="On", enum_strings=["Off", "On", "Fault"], dtype=ChannelType.ENUM)
    ARR = pvproperty(value=[0.5 * i for i in range(8)], dtype=float, max_length=8)
    CHARS = pvproperty(value="a long string in a char array, longer than forty characters",
                       dtype=ChannelType.CHAR, max_length=128, string_encoding="utf-8")
    COUNTER = pvproperty(value=0, dtype=int)

    # caproto's idiom: the startup hook takes the property's name (its decorator is untyped)
    @COUNTER.startup  # type: ignore[no-redef, untyped-decorator]
    async def COUNTER(self, instance: Any, async_lib: Any) -> None:
        print("ready", flush=True)
        while True:
            await async_lib.library.sleep(0.1)
            await instance.write(instance.value + 1)


def watch_stdin() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except Exception:
        pass
    os._exit(0)


def main() -> None:
    # Loopback only: serve, and send beacons, on 127.0.0.1 and nowhere else.
    os.environ["EPICS_CAS_INTF_ADDR_LIST"] = "127.0.0.1"
    os.environ["EPICS_CAS_AUTO_BEACON_ADDR_LIST"] = "NO"
    os.environ["EPICS_CAS_BEACON_ADDR_LIST"] = "127.0.0.1"
    prefix = sys.argv[1] if len(sys.argv) > 1 else "CP:"
    threading.Thread(target=watch_stdin, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    ioc = Kinds(prefix=prefix)
    run(ioc.pvdb, interfaces=["127.0.0.1"], log_pv_names=False)


if __name__ == "__main__":
    main()
