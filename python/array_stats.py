"""What the built-in IOC counts on its own side while clients measure it: the array updates it
published (with the time of the last), and the arrays clients put to it, checked element by
element. Answered on stdout as one `stats {json}` line when the harness asks."""

import json
import sys
import threading
import time


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.array_updates = 0
        self.array_time = 0.0
        self.puts = 0
        self.put_elements = 0
        self.put_bad = 0
        self.put_findings = []
        self.put_first_time = 0.0
        self.put_last_time = 0.0

    def published(self, k):
        with self.lock:
            self.array_updates = k
            self.array_time = time.time()

    def received_put(self, elements, bad, finding):
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

    def answer(self):
        with self.lock:
            out = {"arrayUpdates": self.array_updates, "arrayTime": self.array_time,
                   "time": time.time(), "puts": self.puts, "putElements": self.put_elements,
                   "putBad": self.put_bad, "putFindings": list(self.put_findings),
                   "putFirstTime": self.put_first_time, "putLastTime": self.put_last_time}
        sys.stdout.write("stats " + json.dumps(out, separators=(",", ":")) + "\n")
        sys.stdout.flush()
