"""What the built-in IOC counts on its own side while clients measure it: the counter ticks it
posted and processed, PREFIX:RAMP's value (its updates so far), the array updates it published
(with the time of the last), and the arrays clients put to it, checked element by element.
Answered on stdout as one `stats {json}` line when the harness asks."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    import numpy.typing as npt


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.array_updates = 0
        self.array_time = 0.0
        self.puts = 0
        self.put_elements = 0
        self.put_bad = 0
        self.put_findings: list[str] = []
        self.put_first_time = 0.0
        self.put_last_time = 0.0
        self.ticks = 0
        self.tick_time = 0.0
        # Reads the last counter's value (the ticks the IOC really processed, plus any skips).
        self.read_counter: Callable[[], float] | None = None
        # Reads PREFIX:RAMP's value: it counts its own updates.
        self.read_ramp: Callable[[], float] | None = None

    def ticked(self) -> None:
        now = time.time()
        with self.lock:
            self.ticks += 1
            self.tick_time = now

    def published(self, k: int) -> None:
        with self.lock:
            self.array_updates = k
            self.array_time = time.time()

    def reset_puts(self) -> None:
        with self.lock:
            self.puts = self.put_elements = self.put_bad = 0
            self.put_findings = []
            self.put_first_time = self.put_last_time = 0.0

    def received_put(self, elements: int, bad: bool, finding: str) -> None:
        now = time.time()
        with self.lock:
            if self.puts == 0:
                self.put_first_time = now
            self.puts += 1
            self.put_elements += elements
            self.put_last_time = now
            if bad:
                self.put_bad += 1
                if len(self.put_findings) < 5:
                    self.put_findings.append(finding)

    def answer(self) -> None:
        counter = self.read_counter() if self.read_counter else 0
        ramp = self.read_ramp() if self.read_ramp else 0
        with self.lock:
            out = {"arrayUpdates": self.array_updates, "arrayTime": self.array_time,
                   "time": time.time(), "puts": self.puts, "putElements": self.put_elements,
                   "putBad": self.put_bad, "putFindings": list(self.put_findings),
                   "putFirstTime": self.put_first_time, "putLastTime": self.put_last_time,
                   "ticks": self.ticks, "tickTime": self.tick_time, "counterValue": counter,
                   "rampValue": ramp}
        sys.stdout.write("stats " + json.dumps(out, separators=(",", ":")) + "\n")
        sys.stdout.flush()


class PutArgs(Protocol):
    """What PutChecker reads of the IOC's arguments."""

    @property
    def array_elements(self) -> int: ...

    @property
    def array_type(self) -> str: ...


class PutChecker:
    """The on_update of PREFIX:ARRAY:PUT: every element of put k must equal k (wrapped to the
    element type; a run starts again at 1) and the array must have the waveform's length."""

    def __init__(self, stats: Stats, args: PutArgs) -> None:
        import numpy
        self.numpy = numpy
        self.stats = stats
        self.elements = args.array_elements
        self.modulus = {"int8": 256, "int16": 65536}.get(args.array_type)
        self.last: int | None = None

    def __call__(self, value: npt.NDArray[Any]) -> None:
        n = len(value)
        problems: list[str] = []
        first = value[0] if n else None
        if n != self.elements:
            problems.append(f"{n} elements, expected {self.elements}")
        if n and not bool((value == first).all()):
            where = int(self.numpy.argmax(value != first))
            problems.append(f"element {where} is {value[where]}, the first {first}")
        if first is not None:
            k = int(first)
            step = k - self.last if self.last is not None else 1
            if self.modulus:
                step %= self.modulus
            if k != 1 and step != 1:
                problems.append(f"came after {self.last}")
            self.last = k
        finding = f"put {self.stats.puts + 1} (first element {first}): {', '.join(problems)}"
        self.stats.received_put(n, bool(problems), finding)
