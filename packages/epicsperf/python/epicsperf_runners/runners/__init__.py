"""One module per EPICS client behind the runner driver (driver.py, its CLIENTS table)."""
