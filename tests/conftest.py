"""The suite's entry: on Windows the Windows suite alone, elsewhere everything else.

The Windows suite (tests/windows, marked `windows`) runs under the real Windows CPython: natively
with `python -m pytest -m windows`, or on Linux under Wine (`python tests/windows/wine.py`, which
`.ci/run` runs). The rest of the suite is POSIX's, with its session guard, PostgreSQL and fixtures
in tests/posix_session.py.
"""

from __future__ import annotations

import sys

if sys.platform == "win32":
    collect_ignore = ["e2e", "team", "unit", "posix_session.py", "pg_server.py", "programs.py"]
else:
    collect_ignore = ["windows"]
    from posix_session import *  # noqa: F403  (its hooks and fixtures are this conftest's)
