"""Stopping the simulator: a burst of SIGTERMs ends it as one does.

A signal handler that takes a lock (threading.Event.set) deadlocked the main thread when a
second signal landed while the first handler held the lock: a test script whose exit trap
signalled the simulator twice hung forever, 2 runs in 5 under a burst like this one.
"""

import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import SimProcess  # noqa: E402


class Signals(unittest.TestCase):
    def test_a_burst_of_sigterms_stops_the_server(self):
        for run in range(5):
            sim = SimProcess(kubeconfig=False)
            pid = sim.proc.pid
            for _ in range(2000):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    break
            try:
                code = sim.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                sim.proc.kill()
                sim.proc.wait()
                self.fail("run %d: the simulator did not stop after a burst of SIGTERMs" % run)
            self.assertEqual(code, 0, "run %d: %s" % (run, sim.log()))
            sim.stop()


if __name__ == "__main__":
    unittest.main()
