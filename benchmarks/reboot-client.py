"""One client of benchmarks/reboot.mjs: monitors TEST:CALC1..N with pyepics (libca) or p4p (pvxs).

Reads lines on stdin: `mark` forgets which PVs have updated (sent while the IOC is down);
`report` prints {"resumed": k, "last": ms} on stdout: how many PVs had an update since the mark,
and the wall-clock time (ms since the epoch) of the latest of those first updates.
"""
import json
import sys
import threading
import time

kind, n = sys.argv[1], int(sys.argv[2])
names = [f"TEST:CALC{i}" for i in range(1, n + 1)]
lock = threading.Lock()
first = [None] * n  # wall ms of the first update since the mark


def seen(i):
    now = time.time() * 1000
    with lock:
        if first[i] is None:
            first[i] = now


if kind == "pyepics":
    import epics

    def make_cb(i):
        return lambda **kw: seen(i)

    pvs = [epics.PV(name, callback=make_cb(i), auto_monitor=True) for i, name in enumerate(names)]
elif kind == "p4p":
    from p4p.client.thread import Context

    ctx = Context("pva")

    def make_cb(i):
        def cb(v):
            if not isinstance(v, Exception):
                seen(i)
        return cb

    subs = [ctx.monitor(name, make_cb(i), notify_disconnect=True) for i, name in enumerate(names)]
else:
    sys.exit(f"unknown client {kind}")

print("ready", flush=True)
for line in sys.stdin:
    cmd = line.strip()
    with lock:
        if cmd == "mark":
            first = [None] * n
            print("ok", flush=True)
        elif cmd == "report":
            got = [t for t in first if t is not None]
            print(json.dumps({"resumed": len(got), "last": max(got) if got else None}), flush=True)
