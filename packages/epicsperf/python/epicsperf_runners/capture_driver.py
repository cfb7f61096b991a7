"""The capture task of docs/runners.md for the Python clients: every PV of the list
monitored with the client library, every update written with h5py (capture_file.py).

    python -m epicsperf_runners.capture_driver --client pyepics capture --names FILE --out PATH --flush-ms N
        [--force] [--gap-check REGEX] [--connect-timeout-ms N] [--options JSON] [--environment JSON]

Commands on stdin: start, stop, exit; `stop`, SIGINT, SIGTERM or the end of stdin write what
is buffered, flush and close the file, then ship the summary.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import queue
import re
import signal
import sys
import threading
import time
from typing import Any, NoReturn

from . import capture_clients, capture_file, driver  # driver: emit, fail, fd 3

SIZES = {"char": 1, "short": 2, "enum": 2, "long": 4, "float": 4, "double": 8}


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        driver.fail(message, 2)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = Parser(prog="capture_driver.py")
    p.add_argument("--client", required=True, choices=sorted(capture_clients.CLIENTS))
    p.add_argument("task", choices=("capture",))
    p.add_argument("--names", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--flush-ms", type=float, required=True)
    p.add_argument("--force", action="store_true")
    p.add_argument("--gap-check", default="")
    p.add_argument("--connect-timeout-ms", type=float, default=5000)
    p.add_argument("--options", default="{}")
    p.add_argument("--environment", default="{}")
    return p.parse_args(argv)


class Session:
    """Per-PV counters and gap checks around a CaptureFile; on_update() is the clients' callback."""

    def __init__(self, cf: capture_file.CaptureFile, names: list[str], gap_check: str, flush_ms: float) -> None:
        self.cf, self.flush_ms = cf, flush_ms
        pattern = re.compile(gap_check) if gap_check else None
        self.pvs: dict[int, tuple[capture_file.Pv, str]] = {}
        self.summary: list[dict[str, Any]] = [{"name": n, "updates": 0, "bytes": 0, "gaps": 0, "lost": 0, "overruns": 0,
                         "checked": bool(pattern and pattern.search(n))} for n in names]
        self.detectors: list[capture_file.GapDetector | None] = [
            capture_file.GapDetector() if s["checked"] else None for s in self.summary]
        self.lost_seen = [0] * len(names)
        self.stopped = False
        self.flushes = 0
        self.flush_ms_total = 0.0
        self.max_flush_ms = 0.0
        self.slow = 0

    def add(self, i: int, native_type: str, count: int, varying: bool = False, **meta: Any) -> None:
        self.pvs[i] = (self.cf.add_pv(self.summary[i]["name"], native_type, count, varying, **meta), native_type)

    def skip(self, i: int, reason: str) -> None:
        self.summary[i]["skipped"] = reason

    def on_update(self, i: int, value: Any, timestamp: float, received: float, severity: int, status: int) -> None:
        if self.stopped:
            return
        pv, native_type = self.pvs[i]
        if pv.layout == "fixed" and len(value) != pv.count:  # length changed: pad or cut, as CA does
            fixed = [0] * pv.count
            fixed[:min(len(value), pv.count)] = list(value[:pv.count])
            value = fixed
        row = self.cf.append(pv, value, timestamp, received, severity, status)
        s = self.summary[i]
        s["updates"] += 1
        elements = 1 if pv.layout == "scalar" else len(value)
        s["bytes"] += capture_file.ROW_BYTES + elements * SIZES[native_type] + (12 if pv.layout == "varying" else 0)
        det = self.detectors[i]
        if det is not None:
            gap = det.observe(row, value)
            if gap is not None:
                self.cf.append_gap(pv, gap)
                s["gaps"] += 1
                if gap[3] > 0:
                    s["lost"] += int(gap[3])

    def flush(self) -> None:
        t0 = time.perf_counter()
        updates, nbytes = self.cf.flush()
        ms = (time.perf_counter() - t0) * 1000
        self.flushes += 1
        self.flush_ms_total += ms
        self.max_flush_ms = max(self.max_flush_ms, ms)
        if ms > self.flush_ms:
            self.slow += 1
            driver.emit({"ev": "warn", "message": f"cannot keep up: a flush took {ms:.0f} ms, "
                                                  f"longer than the flush period of {self.flush_ms:.0f} ms"})
        driver.emit({"ev": "flush", "updates": updates, "dataBytes": nbytes, "ms": round(ms, 2)})
        lost = [(i, s["lost"] - self.lost_seen[i]) for i, s in enumerate(self.summary) if s["lost"] > self.lost_seen[i]]
        if lost:
            n = sum(k for _, k in lost)
            where = ", ".join(f"{self.summary[i]['name']} {k}" for i, k in lost[:3])
            more = f", and {len(lost) - 3} more PVs" if len(lost) > 3 else ""
            driver.emit({"ev": "warn",
                         "message": f"cannot keep up: {n} updates lost since the last flush ({where}{more})"})
            for i, _ in lost:
                self.lost_seen[i] = self.summary[i]["lost"]


def commands() -> queue.Queue[str]:
    """stdin words on a queue; EOF becomes 'eof' (the orchestrator is gone)."""
    q: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            if line.strip():
                q.put(line.strip())
        q.put("eof")

    threading.Thread(target=read, name="stdin", daemon=True).start()
    return q


def main(argv: list[str]) -> None:
    driver.open_events()
    args = parse_args(argv)
    try:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file-size limit: EFBIG instead of a kill
    except (AttributeError, ValueError):
        pass
    stop_signal: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: stop_signal.append(s))
    client_cls = capture_clients.CLIENTS[args.client]
    try:
        version = client_cls.load()
    except ImportError:
        driver.fail(f"{client_cls.LIBRARY} is not installed", 3)
    names = driver.read_names(args.names)
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    try:
        cf = capture_file.CaptureFile(os.path.abspath(args.out), args.force, _tool_version(), json.loads(args.options),
                                      json.loads(args.environment), created)
    except capture_file.CaptureExists as err:
        driver.fail(str(err), 2)
    except OSError as err:
        driver.fail(f"cannot write {os.path.abspath(args.out)}: {err}", 2)
    session = Session(cf, names, args.gap_check, args.flush_ms)
    client = client_cls(names, session)
    q = commands()
    driver.emit({"ev": "ready", "client": args.client, "version": str(version)})

    state = "ready"
    t0: float | None = None
    failure: str | None = None
    next_flush: float | None = None
    while True:
        timeout = 0.1 if next_flush is None else max(0.0, min(0.1, next_flush - time.monotonic()))
        try:
            cmd = client.wait(q, timeout)
        except queue.Empty:
            cmd = None
        if stop_signal and cmd is None:
            cmd = "stop"
        if cmd == "start" and state == "ready":
            missing = client.start(args.connect_timeout_ms / 1000.0)
            # the updates counted are those since the monitors began (pyepics delivers them while
            # it connects and reads the PVs' metadata), so the time counts from then too
            t0 = getattr(client, "subscribed_at", None) or time.monotonic()
            next_flush = time.monotonic() + args.flush_ms / 1000.0
            state = "capturing"
            driver.emit({"ev": "capturing", "pvs": len(names) - len(missing), "missing": missing[:20],
                         "missingCount": len(missing)})
        elif cmd in ("stop", "exit", "eof") and state != "stopped":
            seconds = time.monotonic() - t0 if t0 is not None else 0.0
            session.stopped = True
            client.close()
            try:
                if failure is None:
                    session.flush()
            except Exception as err:  # noqa: BLE001 - a full disk, a write error
                failure = f"write failed: {err}"
            try:
                cf.close_file()
            except Exception as err:  # noqa: BLE001
                failure = failure or f"closing the file failed: {err}"
            ship(session, args.client, version, cf.path, seconds, failure)
            state = "stopped"
            if cmd in ("exit", "eof"):
                break
        elif cmd in ("exit", "eof"):
            break
        if state == "capturing" and failure is None and next_flush is not None and time.monotonic() >= next_flush:
            next_flush += args.flush_ms / 1000.0
            try:
                session.flush()
            except Exception as err:  # noqa: BLE001 - a full disk, a write error: stop, keep what was flushed
                failure = f"write failed: {' '.join(str(err).split())}"
                session.stopped = True
                client.close()
                driver.emit({"ev": "stopped", "reason": failure})
            if next_flush < time.monotonic():
                next_flush = time.monotonic() + args.flush_ms / 1000.0
    sys.stdout.flush()
    os._exit(0)


def ship(session: Session, client: str, version: object, path: str, seconds: float, failure: str | None) -> None:
    pvs = session.summary
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    summary: dict[str, Any] = {"client": client, "version": str(version), "file": path, "pvs": pvs,
               "updates": sum(p["updates"] for p in pvs), "bytes": sum(p["bytes"] for p in pvs),
               "fileBytes": size, "seconds": seconds, "flushes": session.flushes,
               "maxFlushMs": session.max_flush_ms,
               "meanFlushMs": session.flush_ms_total / session.flushes if session.flushes else 0.0,
               "slowFlushes": session.slow}
    if failure:
        summary["error"] = failure
    driver.emit({"ev": "summary"}, json.dumps(summary, separators=(",", ":")).encode())


def _tool_version() -> str:
    try:
        # the npm package's package.json, two folders up: python/epicsperf_runners/ in packages/epicsperf/
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "package.json")
        with open(path, encoding="utf-8") as f:
            version: str = json.load(f).get("version", "")
        return version
    except OSError:
        return ""


if __name__ == "__main__":
    driver.run_main(main)
