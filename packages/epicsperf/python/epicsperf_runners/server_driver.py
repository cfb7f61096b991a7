"""The shared driver of the Python server runners (docs/runners.md, Server runners): argv, the
ready check, stdin commands, the paced posts and their (k, time) payload on fd 3, the counters'
ticker, P:RAMP's ramp and their stats.

    python -m epicsperf_runners.server_driver --server softioc serve --prefix P --int32 N,... --bytes M,...
        [--latency N] [--counters N] [--counter-rate HZ]

(with the folder that holds the package, packages/epicsperf/python, on PYTHONPATH).
Each server is a module of servers/ that exposes LIBRARY, PROTOCOLS, load() -> version and
Server (see servers/__init__.py); only the chosen one's library is ever imported (by its load()).
Commands run in order on the main thread (a post's updates, then the next command, as the node
server runner does) while a thread reads stdin: `exit` and the end of stdin end the process at
once, mid-post too, and `stats` and `ramp` are answered at once from that thread.
With --counters N and --counter-rate HZ a ticker thread, from ready on, ticks at t0 + j/HZ (tick j;
a late tick at once, none skipped; more than 1 s behind, the schedule starts again): the counters'
value + 1, the wall clock read once, server.post_counters(value, t), and then the tick counted.
With --counters N a ramp thread of its own, from ready on, posts P:RAMP at the rate of the last
`ramp HZ` command (none before one, nor at 0 Hz), post j at t_cmd + j/HZ (t_cmd the command's
arrival; the same late-post rules as the ticker's): P:RAMP's value + 1, the wall clock read,
server.post_ramp(value, t), and then the value kept for `stats`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import queue
import socket
import struct
import sys
import threading
import time
from typing import Any, Callable, Optional

from .driver import ArgumentParser, emit, fail, open_events, run_main
from .servers import SERVERS, counter_names, latency_names, make_value, names, ramp_names

# At most 127 updates a post: k fits an int8.
MAX_COUNT = 127
# How long the servers may take to answer the ready check's searches (s).
READY_TIMEOUT = 10.0
# The highest rate of `ramp HZ` (Hz), the built-in IOC's RAMP:RATE limit.
RAMP_MAX_HZ = 5000.0


def parse_sizes(option: str, text: str) -> list[int]:
    """A comma-separated list of element counts (each from 1), without repeats."""
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        fail(f"{option} must be numbers, got {text}", 2)
    if any(n < 1 for n in sizes):
        fail(f"{option}: sizes are whole numbers from 1, got {text}", 2)
    return list(dict.fromkeys(sizes))


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = ArgumentParser(prog="server_driver.py")
    p.add_argument("--server", required=True, choices=SERVERS)
    p.add_argument("task", choices=["serve"])
    p.add_argument("--prefix", required=True)
    p.add_argument("--int32", required=True)
    p.add_argument("--bytes", required=True)
    p.add_argument("--latency", type=int)  # the round-trip PVs' elements; none without it
    p.add_argument("--counters", type=int, default=0)  # P:CALC1..N; none without it
    p.add_argument("--counter-rate", type=float, default=0.0)  # ticks a second; 0: still
    args = p.parse_args(argv)
    if args.counters < 0:
        fail(f"--counters takes a whole number, got {args.counters}", 2)
    if not 0 <= args.counter_rate < float("inf"):
        fail(f"--counter-rate takes a number of Hz, got {args.counter_rate}", 2)
    if args.latency is None:
        args.latency = 0
    elif args.latency < 1:
        fail(f"--latency takes a whole number of elements from 1, got {args.latency}", 2)
    args.int32 = parse_sizes("--int32", args.int32)
    args.bytes = parse_sizes("--bytes", args.bytes)
    return args


def env_port(variables: tuple[str, ...], default: int) -> int:
    """The first of the variables set, as a server reads its port, else the EPICS default."""
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return int(value)
            except ValueError:
                fail(f"{name} is not a port number: {value}", 2)
    return default


def env_host(name: str) -> str:
    """The first address of an interface list, the loopback address for none or any."""
    first = (os.environ.get(name, "").split() or ["0.0.0.0"])[0].split(":")[0]
    return "127.0.0.1" if first == "0.0.0.0" else first


def ca_search(pvs: dict[int, str], _reply_port: int) -> bytes:
    """A CA search datagram for the PVs by id (VERSION, then a SEARCH each, DONT_REPLY when not
    found), answered to the sender."""
    msg = struct.pack(">HHHHII", 0, 0, 0, 13, 0, 0)
    for cid, name in pvs.items():
        body = name.encode() + b"\0"
        body += b"\0" * (-len(body) % 8)
        msg += struct.pack(">HHHHII", 6, len(body), 5, 13, cid, cid) + body
    return msg


def ca_found(data: bytes) -> list[int]:
    """The channel ids a CA search reply answers."""
    found: list[int] = []
    offset = 0
    while offset + 16 <= len(data):
        command, size, _, _, _, cid = struct.unpack_from(">HHHHII", data, offset)
        if command == 6:
            found.append(cid)
        offset += 16 + size
    return found


def pva_search(pvs: dict[int, str], reply_port: int) -> bytes:
    """A PV Access search request (unicast, little-endian) for the PVs by id, answered to
    reply_port of the sender's address."""
    def string(s: str) -> bytes:
        return bytes([len(s)]) + s.encode()

    body = struct.pack("<IB3x16sH", 1, 0x80, bytes(16), reply_port) + b"\x01" + string("tcp")
    body += struct.pack("<H", len(pvs))
    body += b"".join(struct.pack("<I", i) + string(name) for i, name in pvs.items())
    return struct.pack("<BBBBI", 0xCA, 2, 0, 3, len(body)) + body


def pva_found(data: bytes) -> list[int]:
    """The search ids a PV Access search response answers (none when it says not found)."""
    if len(data) < 8 or data[0] != 0xCA or data[3] != 4:
        return []
    order = ">" if data[2] & 0x80 else "<"
    offset = 8 + 12 + 4 + 16 + 2
    offset += 1 + data[offset]  # the protocol, "tcp"
    found, count = struct.unpack_from(order + "BH", data, offset)
    return list(struct.unpack_from(f"{order}{count}I", data, offset + 3)) if found else []


def await_answers(protocol: str, pvs: list[str]) -> None:
    """Search for every PV on the port the environment gives the protocol's server, until each
    is answered (a server that serves them on another port, or not at all, fails the run)."""
    if protocol == "CA":
        port = env_port(("EPICS_CAS_SERVER_PORT", "EPICS_CA_SERVER_PORT"), 5064)
        host = env_host("EPICS_CAS_INTF_ADDR_LIST")
    else:
        port = env_port(("EPICS_PVAS_BROADCAST_PORT", "EPICS_PVA_BROADCAST_PORT"), 5076)
        host = env_host("EPICS_PVAS_INTF_ADDR_LIST")
    search: Callable[[dict[int, str], int], bytes] = ca_search if protocol == "CA" else pva_search
    found_in: Callable[[bytes], list[int]] = ca_found if protocol == "CA" else pva_found
    deadline = time.monotonic() + READY_TIMEOUT
    pending = dict(enumerate(pvs, 1))  # id -> name, the ids of every search the same
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((host, 0))
        while pending:
            if time.monotonic() > deadline:
                fail(f"no {protocol} server answered a search for {next(iter(pending.values()))} "
                     f"on {host}:{port} within {READY_TIMEOUT:g} s")
            msg = search(pending, sock.getsockname()[1])
            try:
                sock.sendto(msg, (host, port))
            except OSError:
                pass  # not listening yet: ICMP refusal
            until = time.monotonic() + 0.2
            while pending and time.monotonic() < until:
                sock.settimeout(max(0.001, until - time.monotonic()))
                try:
                    data = sock.recv(65536)
                except (socket.timeout, ConnectionRefusedError):
                    continue
                try:
                    for i in found_in(data):
                        pending.pop(i, None)
                except (struct.error, IndexError):  # not a reply of this protocol
                    continue


class Posts:
    """The (k, wall clock) of every post since the last ship, in the order posted."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.lock = threading.Lock()

    def add(self, k: int, t: float) -> None:
        with self.lock:
            self.values += (k, t)

    def take(self) -> bytes:
        with self.lock:
            values, self.values = self.values, []
        return struct.pack(f"<{len(values)}d", *values)


def post(server: Any, pvs: dict[str, tuple[str, int]], posts: Posts, name: str, count: int, period: float) -> None:
    """Update k = 1..count at start + (k-1) * period on the monotonic clock; the wall clock is read
    just before each hand-over (the value already made) and kept with k."""
    kind, n = pvs[name]
    # A library that takes a post later (pythonSoftIOC's callback thread) waits for the last one
    # first, before the clock is read (servers/softioc.py).
    taken = getattr(server, "wait_posted", None)
    start = time.monotonic()
    for k in range(1, count + 1):
        value = make_value(kind, n, k)
        delay = start + (k - 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if taken is not None:
            taken(name)
        t = time.time()
        server.post(name, value, t)
        posts.add(k, t)
    emit({"ev": "posted", "name": name, "count": count})


def parse_post(words: list[str], pvs: dict[str, tuple[str, int]]) -> tuple[str, int, float]:
    """(name, count, period in s) of `post NAME COUNT PERIOD_MS`."""
    line = " ".join(words)
    if len(words) != 4:
        fail(f"bad post command: {line} (post NAME COUNT PERIOD_MS)", 2)
    name = words[1]
    if name not in pvs:
        fail(f"no PV {name} here", 2)
    try:
        count, period = int(words[2]), float(words[3])
    except ValueError:
        fail(f"bad post command: {line}", 2)
    if not 1 <= count <= MAX_COUNT or not period >= 0:
        fail(f"bad post command: {line} (COUNT 1..{MAX_COUNT}, PERIOD_MS from 0)", 2)
    return name, count, period / 1000.0


class Ticks:
    """The counters' ticks completed, the wall clock of the last and the value it posted."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ticks = 0
        self.time = 0.0
        self.value = 1

    def ticked(self, value: int, t: float) -> None:
        with self.lock:
            self.ticks += 1
            self.time, self.value = t, value

    def answer(self, ramp: Ramp | None) -> None:
        """The stats event; rampValue only with counters (a ramp)."""
        with self.lock:
            event: dict[str, Any] = {"ev": "stats", "ticks": self.ticks, "tickTime": self.time,
                                     "counterValue": self.value}
        if ramp is not None:
            event["rampValue"] = ramp.current()
        emit({**event, "time": time.time()})


def post_or_end(post: Callable[[float, float], None], value: int, what: str) -> float | None:
    """Post value, stamped now; the stamp, or None when the library failed (which ends the runner,
    unless it is stopping anyway)."""
    t = time.time()
    try:
        post(float(value), t)
    except Exception as err:  # noqa: BLE001 - any library failure ends the runner
        if not _stop.is_set():
            fail(f"{what} failed: {err}")
        return None
    return t


def next_on_schedule(next_t: float, period: float) -> float:
    """The next post's time on the monotonic clock: one period on, or a period from now when the
    schedule fell more than a second behind (it starts again)."""
    next_t += period
    return next_t if next_t >= time.monotonic() - 1.0 else time.monotonic() + period


def ticker(server: Any, rate: float, ticks: Ticks) -> None:
    """Tick j at t0 + j / rate on the monotonic clock until stopped (see the module's docstring);
    a library's failure ends the runner."""
    period = 1.0 / rate
    next_t = time.monotonic() + period
    value = 1
    while not _stop.is_set():
        delay = next_t - time.monotonic()
        if delay > 0 and _stop.wait(delay):
            return
        value += 1
        t = post_or_end(server.post_counters, value, f"the counters' tick {value - 1}")
        if t is None:
            return
        ticks.ticked(value, t)
        next_t = next_on_schedule(next_t, period)


class Ramp:
    """P:RAMP's rate, set by `ramp` commands (each a new schedule from its arrival), and the value
    of its last post."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.hz = 0.0
        self.start = 0.0  # the last command's arrival, on the monotonic clock
        self.generation = 0  # the commands so far
        self.value = 1

    def set(self, hz: float) -> None:
        """In effect once it returns: the ramp thread takes the new schedule before its next post."""
        with self.cond:
            self.hz, self.start = hz, time.monotonic()
            self.generation += 1
            self.cond.notify_all()

    def posted(self, value: int) -> None:
        with self.cond:
            self.value = value

    def current(self) -> int:
        with self.cond:
            return self.value


def parse_ramp(words: list[str], ramp: Ramp | None) -> float:
    """HZ of `ramp HZ`: a number from 0 to RAMP_MAX_HZ, with counters."""
    line = " ".join(words)
    if ramp is None:
        fail(f"no RAMP without --counters: {line}", 2)
    if len(words) != 2:
        fail(f"bad ramp command: {line} (ramp HZ)", 2)
    try:
        hz = float(words[1])
    except ValueError:
        fail(f"bad ramp command: {line} (HZ a number)", 2)
    if not 0 <= hz <= RAMP_MAX_HZ:
        fail(f"bad ramp command: {line} (HZ 0..{RAMP_MAX_HZ:g})", 2)
    return hz


def ramper(server: Any, ramp: Ramp) -> None:
    """Post P:RAMP at the rate of the last `ramp` command, post j at its arrival + j / HZ on the
    monotonic clock (a late post at once, none skipped; more than 1 s behind, the schedule starts
    again from now), until stopped; still at 0 Hz. A library's failure ends the runner."""
    value = 1
    seen = 0  # the generation whose schedule runs
    period = next_t = 0.0
    while not _stop.is_set():
        with ramp.cond:
            if ramp.generation != seen:  # a new command: its own schedule
                seen = ramp.generation
                if ramp.hz > 0:
                    period = 1.0 / ramp.hz
                    next_t = ramp.start + period
            if not ramp.hz > 0:
                ramp.cond.wait()  # still until the next command
                continue
            delay = next_t - time.monotonic()
            if delay > 0:
                ramp.cond.wait(delay)  # a command wakes it early
                continue
        value += 1
        if post_or_end(server.post_ramp, value, f"RAMP's post of {value}") is None:
            return
        ramp.posted(value)
        next_t = next_on_schedule(next_t, period)


# The server, once made: what `exit` and the end of stdin stop; and the ticker's stop.
_server: list[Any] = []
_stop = threading.Event()


def finish() -> None:
    """Stop serving and end the process, within a second or two whatever the library does."""
    threading.Timer(1.5, lambda: os._exit(0)).start()
    _stop.set()
    try:
        if _server:
            _server[0].stop()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


# A command for the worker: a post's (name, count, period in s), or None to ship.
Command = Optional[tuple[str, int, float]]


def command_reader(pvs: dict[str, tuple[str, int]], ticks: Ticks, ramp: Ramp | None) -> queue.Queue[Command]:
    """Commands from stdin, checked as they come, on a queue; `stats` and `ramp` answered and
    `exit` or EOF finish() at once (mid-start or mid-post too)."""
    q: queue.Queue[Command] = queue.Queue()

    def run() -> None:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "post":
                q.put(parse_post(words, pvs))
            elif words[0] == "ship" and len(words) == 1:
                q.put(None)
            elif words[0] == "stats" and len(words) == 1:
                ticks.answer(ramp)
            elif words[0] == "ramp":
                hz = parse_ramp(words, ramp)
                assert ramp is not None
                ramp.set(hz)
                emit({"ev": "ramped", "hz": int(hz) if hz.is_integer() else hz})
            elif words[0] == "exit" and len(words) == 1:
                break
            else:
                fail(f"unknown command: {line.strip()}", 2)
        finish()

    threading.Thread(target=run, name="stdin", daemon=True).start()
    return q


def main(argv: list[str]) -> None:
    open_events()
    args = parse_args(argv)
    pvs = names(args.prefix, args.int32, args.bytes)
    ticks = Ticks()
    ramp = Ramp() if args.counters > 0 else None
    commands = command_reader(pvs, ticks, ramp)
    module = importlib.import_module(f".servers.{SERVERS[args.server]}", __package__)
    try:
        version = module.load()
    except ImportError:
        fail(f"{module.LIBRARY} is not installed")
    server = module.Server()
    _server.append(server)
    try:
        server.start(args.prefix, args.int32, args.bytes, args.latency, args.counters)
    except Exception as err:  # noqa: BLE001 - any library failure ends the runner
        fail(f"{args.server}: cannot serve: {err}")
    # Of the counters, the first and the last: a search for them all would not fit a datagram.
    counters = counter_names(args.prefix, args.counters)
    for protocol in module.PROTOCOLS:
        await_answers(protocol, [*pvs, *latency_names(args.prefix, args.latency), *counters[:1], *counters[1:][-1:],
                                 *ramp_names(args.prefix, args.counters)])
    emit({"ev": "ready", "server": args.server, "version": str(version)})
    if counters and args.counter_rate > 0:
        threading.Thread(target=ticker, args=(server, args.counter_rate, ticks), name="ticker", daemon=True).start()
    if ramp is not None:
        threading.Thread(target=ramper, args=(server, ramp), name="ramp", daemon=True).start()

    posts = Posts()
    while True:
        item = commands.get()
        if item is None:
            payload = posts.take()
            emit({"ev": "posts", "count": len(payload) // 16}, payload)
        else:
            post(server, pvs, posts, *item)


if __name__ == "__main__":
    run_main(main)
