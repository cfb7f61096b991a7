"""One module per EPICS client behind the runner driver (runner.py, its CLIENTS table)."""
