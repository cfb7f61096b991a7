"""epicsperf's Python side: the client runners (driver.py for the tasks of clients.json, capture_driver.py for
the capture task, each running a client's module), the built-in IOC
(ioc.py) and the environment report (doctor.py), each started as `python -m epicsperf_runners.<module>`."""
