"""Save, compare with live and restore a list of PVs with pyepics, the way PSI's snapshot tool does
(github.com/paulscherrerinstitute/snapshot: snapshot/core.py, snapshot/ca_core/snapshot_ca.py):
one process per operation, as benchmarks/saveset.mjs runs it.

    python saveset-pyepics.py save NAMES_FILE SAVED_FILE [--timeout S]
    python saveset-pyepics.py compare-live NAMES_FILE SAVED_FILE [--timeout S]
    python saveset-pyepics.py restore NAMES_FILE SAVED_FILE [--timeout S]

Every operation first creates a pyepics PV per name as SnapshotPv does (auto_monitor=False,
connection_timeout=None, a connection callback) and waits for all of them to connect, at most
--timeout seconds (snapshot polls every 0.2 s; here the connection callbacks end the wait at once).

- save: for each PV in turn (Snapshot.save_pvs calls SnapshotPv.save_pv, a blocking get, PV after
  PV), a CTRL get (units, precision, enum states) and a TIME get (value, alarm, timestamp), so it
  records what this project's save records; writes SAVED_FILE (JSON).
- compare-live: reads SAVED_FILE, starts a get of every PV and then completes them in turn
  (PvUpdater._get_start / _get_complete), and compares each with the saved value with tolerance 0
  (SnapshotPv.compare: |a-b| <= 0 for floats, numpy.allclose for arrays, == otherwise).
- restore: reads SAVED_FILE, puts every saved value with a completion callback (SnapshotPv.restore_pv:
  PV.put(value, wait=False, callback=...)) without waiting in between, waits until every callback
  has come (Snapshot.restore_pvs_blocking; at most --timeout seconds after the last put), then reads
  every PV back as compare-live does and counts those equal to the saved value.

Prints one JSON line on stdout: {op, client, n, seconds, cpuSeconds, phases, counts, failures, ok}.
`seconds` is wall time from before the first PV is created (libca's context is created then) to the
end, file reading and writing included; process start and imports are not. `cpuSeconds` is this
process's user + system CPU over the same span (resource.getrusage). `ok` is this script's own
check: every PV saved / compared / restored and read back equal.
"""
import argparse
import json
import resource
import sys
import threading
import time

import numpy
from epics import PV, ca

TYPE_NAMES = ["string", "short", "float", "enum", "char", "long", "double"]


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def plain(v):
    """A value as JSON holds it."""
    if isinstance(v, numpy.ndarray):
        return v.tolist()
    if isinstance(v, numpy.generic):
        return v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def compare(value1, value2, tolerance=0.0):
    """SnapshotPv.compare of snapshot/core.py."""
    if value1 is None or value2 is None:
        return value1 is value2
    if isinstance(value1, float) and isinstance(value2, float):
        return abs(value1 - value2) <= tolerance
    if any(isinstance(x, numpy.ndarray) for x in (value1, value2)):
        try:
            return numpy.allclose(value1, value2, atol=tolerance, rtol=0)
        except (TypeError, ValueError):
            return numpy.array_equal(value1, value2)
    return value1 == value2


def saved_value(v):
    """A saved value as snapshot's parser hands it to restore and compare: arrays as ndarrays."""
    return numpy.asarray(v) if isinstance(v, list) else v


class Connections:
    """PVs created as SnapshotPv creates them, and the wait for all of them to connect."""

    def __init__(self, names, timeout):
        self.lock = threading.Lock()
        self.up = set()
        self.all_up = threading.Event()
        self.n = len(names)
        self.pvs = [PV(name, auto_monitor=False, connection_timeout=None, connection_callback=self._on_connection)
                    for name in names]
        self.all_up.wait(timeout)

    def _on_connection(self, pvname=None, conn=None, **_kw):
        with self.lock:
            if conn:
                self.up.add(pvname)
            else:
                self.up.discard(pvname)
            if len(self.up) == self.n:
                self.all_up.set()


def read_all(pvs, timeout):
    """PvUpdater._get: start a get of every connected PV, then complete them in turn."""
    started = []
    for pv in pvs:
        try:
            if pv.connected:
                ca.get_with_metadata(pv.chid, wait=False, as_numpy=True)
                started.append(pv)
                continue
        except ca.ChannelAccessException:
            pass
        started.append(None)
    out = []
    for pv in started:
        if pv is None:
            out.append(None)
            continue
        try:
            md = ca.get_complete_with_metadata(pv.chid, as_numpy=True, timeout=timeout)
        except (ca.ChannelAccessException, ca.ChannelAccessGetFailure):
            md = None
        out.append(None if md is None else md["value"])
    return out


def op_save(names, saved_file, timeout, phases):
    t = time.monotonic()
    conns = Connections(names, timeout)
    phases["connect"] = time.monotonic() - t
    t = time.monotonic()
    pvs, failures = [], []
    for name, pv in zip(names, conns.pvs):
        entry = {"name": name, "ok": False}
        if pv.connected and pv.read_access:
            ctrl = pv.get_ctrlvars(timeout=timeout)
            md = pv.get_with_metadata(form="time", use_monitor=False, as_numpy=True, timeout=timeout)
            if md is not None and md.get("value") is not None and ctrl is not None:
                entry.update(ok=True, value=plain(md["value"]), type=TYPE_NAMES[ca.field_type(pv.chid)],
                             count=ca.element_count(pv.chid), severity=md.get("severity"), status=md.get("status"),
                             timestamp=md.get("timestamp"))
                for key, to in (("units", "units"), ("precision", "precision"), ("enum_strs", "enumStrings")):
                    if ctrl.get(key) is not None:
                        entry[to] = plain(list(ctrl[key]) if key == "enum_strs" else ctrl[key])
            else:
                entry["error"] = "no value"
        else:
            entry["error"] = "not connected or no read access"
        if not entry["ok"]:
            failures.append({"name": name, "reason": entry["error"]})
        pvs.append(entry)
    phases["get"] = time.monotonic() - t
    t = time.monotonic()
    with open(saved_file, "w") as f:
        meta = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "client": "pyepics"}
        json.dump({"meta": meta, "pvs": pvs}, f)
    phases["write"] = time.monotonic() - t
    saved = sum(1 for p in pvs if p["ok"])
    return {"saved": saved, "notSaved": len(pvs) - saved}, failures, saved == len(names)


def load_saved(saved_file, names):
    with open(saved_file) as f:
        by_name = {p["name"]: p for p in json.load(f)["pvs"]}
    return [by_name.get(name) for name in names]


def load_and_connect(names, saved_file, timeout, phases):
    """The saved values, then every PV connected: the timed start of compare and restore."""
    t = time.monotonic()
    saved = load_saved(saved_file, names)
    phases["read"] = time.monotonic() - t
    t = time.monotonic()
    conns = Connections(names, timeout)
    phases["connect"] = time.monotonic() - t
    return saved, conns


def op_compare(names, saved_file, timeout, phases):
    saved, conns = load_and_connect(names, saved_file, timeout, phases)
    t = time.monotonic()
    live = read_all(conns.pvs, timeout)
    phases["get"] = time.monotonic() - t
    t = time.monotonic()
    counts = {"equal": 0, "different": 0, "notConnected": 0, "notSaved": 0}
    different = []
    for name, s, v in zip(names, saved, live):
        if s is None or not s.get("ok"):
            counts["notSaved"] += 1
        elif v is None:
            counts["notConnected"] += 1
        elif compare(saved_value(s["value"]), v, 0.0):
            counts["equal"] += 1
        else:
            counts["different"] += 1
            different.append(name)
    phases["compare"] = time.monotonic() - t
    # Different values are the comparison's finding, not failures of it.
    failures = [{"name": n, "reason": "not connected"}
                for n, s, v in zip(names, saved, live) if s and s.get("ok") and v is None]
    counts["differentNames"] = different
    return counts, failures, counts["notConnected"] == 0 and counts["notSaved"] == 0


def op_restore(names, saved_file, timeout, phases):
    saved, conns = load_and_connect(names, saved_file, timeout, phases)

    t = time.monotonic()
    lock = threading.Lock()
    done = {}
    all_done = threading.Event()
    expected = [0]
    issued = [False]

    def on_complete(pvname=None, status=None, **_kw):
        with lock:
            done[pvname] = status
            if issued[0] and len(done) == expected[0]:
                all_done.set()

    failures = []
    for name, pv, s in zip(names, conns.pvs, saved):
        if s is None or not s.get("ok"):
            failures.append({"name": name, "reason": "not saved"})
        elif not pv.connected:
            failures.append({"name": name, "reason": "not connected"})
        elif not pv.write_access:
            failures.append({"name": name, "reason": "no write access"})
        else:
            try:
                with lock:
                    expected[0] += 1
                pv.put(saved_value(s["value"]), wait=False, callback=on_complete, callback_data={"status": "ok"})
            except (TypeError, ca.ChannelAccessException) as e:
                with lock:
                    expected[0] -= 1
                failures.append({"name": name, "reason": f"put: {e}"})
    with lock:
        issued[0] = True
        if len(done) == expected[0]:
            all_done.set()
    phases["put"] = time.monotonic() - t
    t = time.monotonic()
    all_done.wait(timeout)
    phases["completion"] = time.monotonic() - t
    with lock:
        completed = len(done)
    put_names = {n for n, pv, s in zip(names, conns.pvs, saved) if s and s.get("ok")} - {f["name"] for f in failures}
    for name in sorted(put_names - set(done)):
        failures.append({"name": name, "reason": "no completion within the timeout"})

    t = time.monotonic()
    live = read_all(conns.pvs, timeout)
    phases["readBack"] = time.monotonic() - t
    back = 0
    for name, s, v in zip(names, saved, live):
        if s is None or not s.get("ok"):
            continue
        if v is not None and compare(saved_value(s["value"]), v, 0.0):
            back += 1
        elif name in done:
            failures.append({"name": name, "reason": "read back differs" if v is not None else "read back failed"})
    counts = {"put": expected[0], "completed": completed, "readBackEqual": back}
    return counts, failures, back == len(names) and completed == expected[0] == len(names)


def main(argv):
    p = argparse.ArgumentParser(prog="saveset-pyepics.py")
    p.add_argument("op", choices=["save", "compare-live", "restore"])
    p.add_argument("names_file")
    p.add_argument("saved_file")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds: the connection wait, each get, the completions")
    args = p.parse_args(argv)

    wall0, cpu0 = time.monotonic(), cpu()
    with open(args.names_file) as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    phases = {}
    fn = {"save": op_save, "compare-live": op_compare, "restore": op_restore}[args.op]
    counts, failures, ok = fn(names, args.saved_file, args.timeout, phases)
    seconds, cpu_seconds = time.monotonic() - wall0, cpu() - cpu0
    print(json.dumps({
        "op": args.op, "client": "pyepics", "n": len(names), "seconds": seconds, "cpuSeconds": cpu_seconds,
        "processCpuSeconds": cpu(), "phases": phases, "counts": counts,
        "failures": failures[:20], "failureCount": len(failures), "ok": ok,
    }), flush=True)
    # libca's exit handlers may wait on its threads; the answer is out.
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
