"""Background work below the daemon's own CPU priority, so that what a user waits for (a hook's
recall, a request) wins the processor when both want it: a sleep's planning process and the thread
that embeds memories in the background."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

# Unix niceness added to background work (the scheduler then gives it about a tenth of a core that
# a process at the daemon's own priority wants).
NICENESS = 10
# Windows: BELOW_NORMAL_PRIORITY_CLASS for a process, THREAD_PRIORITY_BELOW_NORMAL for a thread.
_BELOW_NORMAL_CLASS = 0x4000
_THREAD_BELOW_NORMAL = -1


def lower_process() -> None:
    """Run this whole process below normal priority (best effort: a refusal changes nothing)."""
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), _BELOW_NORMAL_CLASS)
        return
    with contextlib.suppress(OSError):
        os.nice(NICENESS)


def lower_thread() -> None:
    """Run the calling thread below normal priority, where the system allows one thread's alone:
    Linux (a thread is a task with its own niceness) and Windows; elsewhere nothing changes."""
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        kernel32.SetThreadPriority(kernel32.GetCurrentThread(), _THREAD_BELOW_NORMAL)
    elif sys.platform.startswith("linux"):
        thread = threading.get_native_id()
        with contextlib.suppress(OSError):
            # Relative to where the thread stands, as os.nice is for a process; 19 is the lowest.
            now = os.getpriority(os.PRIO_PROCESS, thread)
            os.setpriority(os.PRIO_PROCESS, thread, min(19, now + NICENESS))
