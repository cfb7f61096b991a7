"""Reports the Python side of the environment as JSON: interpreter and client library versions."""
from __future__ import annotations

import concurrent.futures
import importlib.metadata as md
import json
import platform
import subprocess
import sys
from typing import Any

from .clients import python_libraries

# (distribution, module to import), as clients.json declares them
PACKAGES = python_libraries()


def import_error(module: str) -> str | None:
    """Import in a fresh interpreter: some clients bundle their own EPICS libraries and cannot
    share a process (pvapy with epicscorelibs crashes at exit)."""
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 0:
        return None
    lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
    return f"import {module} failed: " + (lines[-1] if lines else f"exit code {r.returncode}")


def main() -> None:
    out: dict[str, Any] = {"python": platform.python_version(), "executable": sys.executable, "packages": {}}
    installed: list[tuple[str, str]] = []
    for dist, module in PACKAGES:
        try:
            out["packages"][dist] = {"version": md.version(dist)}
            installed.append((dist, module))
        except md.PackageNotFoundError:
            out["packages"][dist] = {"error": "not installed"}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for (dist, _), err in zip(installed, pool.map(lambda dm: import_error(dm[1]), installed)):
            if err:
                out["packages"][dist]["error"] = err
    print(json.dumps(out))


if __name__ == "__main__":
    main()
