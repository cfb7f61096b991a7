"""cothread.catools: cooperative threads in the main thread over libca.

Snapshot: caget(names, format=FORMAT_TIME, timeout=t, throw=False), which reads every
name concurrently (one cothread each) and returns all results together, so every
entry's elapsedMs is the batch's. Monitor: camonitor(names, callback) with FORMAT_TIME
(library defaults otherwise). Array: camonitor(name, callback, format=FORMAT_TIME,
count=0) with DBE_VALUE|DBE_ALARM; cothread copies each update into a numpy array in
libca's callback and hands the newest to the scheduler (all_updates=False, its default).
While waiting for commands the scheduler keeps running:
stdin commands reach it through a ThreadedEventQueue.
"""

import threading

from . import base

LIBRARY = "cothread"
cothread = None
catools = None


def load():
    global cothread, catools
    import cothread as lib
    import cothread.catools as ca
    cothread = lib
    catools = ca
    return lib.__version__


class Client(base.Client):
    def __init__(self, names):
        super().__init__(names)
        self.subscriptions = []
        self.inbox = None

    def snapshot(self, timeout, t0):
        results = catools.caget(self.names, format=catools.FORMAT_TIME, timeout=timeout,
                                throw=False)
        return base.catools_results(results, base.elapsed_ms(t0))

    def monitor(self, store):
        self.subscriptions = catools.camonitor(self.names, base.catools_updates(store),
                                               format=catools.FORMAT_TIME)

    def array(self, store):
        self.subscriptions = [catools.camonitor(
            self.names[0], base.catools_array_updates(store), format=catools.FORMAT_TIME, count=0,
            events=catools.DBE_VALUE | catools.DBE_ALARM)]

    def wait_command(self, commands):
        if self.inbox is None:
            self.inbox = cothread.ThreadedEventQueue()
            inbox = self.inbox

            def forward():
                while True:
                    inbox.Signal(commands.get())

            threading.Thread(target=forward, name="commands", daemon=True).start()
        return self.inbox.Wait()

    def close(self):
        for sub in self.subscriptions:
            sub.close()
