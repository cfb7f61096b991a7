"""The Python runners' clients are those clients.json declares (the tool reads the same file),
each running the tasks declared for it and no other, and importing a client's module imports
no client library: its load() does."""

import json
import os
import subprocess
import sys
from pathlib import Path

from epicsperf_runners import capture_clients, clients, driver


def test_the_driver_and_the_capture_driver_serve_the_declared_clients() -> None:
    assert driver.CLIENTS == clients.python_clients()
    assert sorted(capture_clients.CLIENTS) == sorted(clients.capture_clients("python"))
    assert "pyepics" in driver.CLIENTS and "node" not in driver.CLIENTS
    declared = {c["name"]: c["tasks"] for c in clients.declarations()["clients"] if c["runtime"] == "python"}
    assert driver.TASKS == declared


def test_the_runner_refuses_a_task_its_client_does_not_declare(tmp_path: Path) -> None:
    names = tmp_path / "names"
    names.write_text("TEST:CALC1\n")
    read, write = os.pipe()
    try:
        # fd 3 carries the runner's events (docs/runners.md); it fails before loading any library.
        proc = subprocess.run(
            [sys.executable, "-m", "epicsperf_runners.driver", "--client", "pyepics-nonumpy", "monitor",
             "--names", str(names), "--samples", "1"],
            close_fds=False, preexec_fn=lambda: os.dup2(write, 3), capture_output=True, timeout=60, check=False)
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as events:
        lines = events.read().decode().splitlines()
    assert proc.returncode == 2
    assert [json.loads(line) for line in lines] == [
        {"ev": "error", "message": "pyepics-nonumpy does not serve the monitor task (clients.json: array)"}]


def test_a_client_module_imports_no_client_library() -> None:
    libraries = dict(clients.python_libraries())
    for name, module in clients.python_clients().items():
        # a fresh interpreter each: what the module alone imports
        probe = (f"import sys, epicsperf_runners.runners.{module} as m; "
                 "print(m.LIBRARY, callable(m.load), hasattr(m, 'Client'), "
                 f"any(k.split('.')[0] == {libraries!r}[m.LIBRARY] for k in sys.modules))")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
        assert out[1:] == ["True", "True", "False"], (name, out)
