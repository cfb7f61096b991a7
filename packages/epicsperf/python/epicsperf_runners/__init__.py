"""epicsperf's Python side: the client runners (runner.py, capture_runner.py), the built-in IOC
(ioc.py) and the environment report (doctor.py), each started as `python -m epicsperf_runners.<module>`."""
