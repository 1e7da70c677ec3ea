"""Measuring one process, for the benchmark scripts (bench-lint.sh, bench-adapt.sh)."""
import os
import subprocess
import sys
import time


def run(argv, ok=(0,)):
    """Wall seconds and peak RSS (KiB) of one process; its output goes to /dev/null. Ends the
    benchmark when the process exits with a code not in `ok`."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(f"{' '.join(argv)} exited with {code}")
    return wall, usage.ru_maxrss
