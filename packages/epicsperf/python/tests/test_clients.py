"""The Python runners' clients are those clients.json declares (the tool reads the same file),
and importing a client's module imports no client library: its load() does."""

import subprocess
import sys

from epicsperf_runners import capture_clients, clients, runner


def test_the_runner_and_the_capture_runner_serve_the_declared_clients() -> None:
    assert runner.CLIENTS == clients.python_clients()
    assert sorted(capture_clients.CLIENTS) == sorted(clients.capture_clients("python"))
    assert "pyepics" in runner.CLIENTS and "node" not in runner.CLIENTS


def test_a_client_module_imports_no_client_library() -> None:
    libraries = dict(clients.python_libraries())
    for name, module in clients.python_clients().items():
        # a fresh interpreter each: what the module alone imports
        probe = (f"import sys, epicsperf_runners.runners.{module} as m; "
                 "print(m.LIBRARY, callable(m.load), hasattr(m, 'Client'), "
                 f"any(k.split('.')[0] == {libraries!r}[m.LIBRARY] for k in sys.modules))")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
        assert out[1:] == ["True", "True", "False"], (name, out)
