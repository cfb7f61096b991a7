"""The clients epicsperf measures, as declared once in the package's clients.json, which the
tool (src/clients/registry.ts) reads too: the Python runners' names, modules and tasks, the
clients that capture, and the libraries the doctor reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# packages/epicsperf/clients.json, beside python/
DECLARATIONS = Path(__file__).resolve().parents[2] / "clients.json"


def declarations() -> dict[str, Any]:
    with open(DECLARATIONS, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def python_clients() -> dict[str, str]:
    """--client name -> the module of runners/ that runs it, for every Python client."""
    return {c["name"]: c["run"]["python"] for c in declarations()["clients"] if c["runtime"] == "python"}


def python_tasks() -> dict[str, list[str]]:
    """--client name -> the tasks its runner serves, for every Python client."""
    return {c["name"]: list(c["tasks"]) for c in declarations()["clients"] if c["runtime"] == "python"}


def capture_clients(runtime: str = "python") -> list[str]:
    """The clients of a runtime that capture to HDF5."""
    return [c["name"] for c in declarations()["clients"] if c.get("capture") and c["runtime"] == runtime]


def python_libraries() -> list[tuple[str, str]]:
    """(distribution, module imported to check it) for every library the doctor reports."""
    return list(declarations()["pythonLibraries"].items())
