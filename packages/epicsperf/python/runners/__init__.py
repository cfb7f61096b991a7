"""One module per EPICS client behind python/runner.py."""
