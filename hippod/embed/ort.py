"""onnxruntime with Microsoft's telemetry off; hippod imports it through here alone.

onnxruntime's own builds carry 1DS telemetry on Linux and macOS: as it loads it writes a device id and
an offline event store under ~/.cache/Microsoft/DeveloperTools/.onnxruntime, and seconds later posts
to mobile.events.data.microsoft.com. hippod sends nothing anywhere that its user did not turn on.
`ORT_DISABLE_TELEMETRY=1` is the runtime's full opt-out, read once as the module loads: nothing is
created, written or sent. `disable_telemetry_events()` then turns off the events of the sessions
too (the only switch on Windows, whose builds report through the system's own tracing). A user who
sets the variable to anything else has chosen for themselves, and both are left as they say.
"""

from __future__ import annotations

import os

TELEMETRY_VAR = "ORT_DISABLE_TELEMETRY"

if not os.environ.get(TELEMETRY_VAR):
    os.environ[TELEMETRY_VAR] = "1"

import onnxruntime as onnxruntime  # noqa: E402  (after the variable: the runtime reads it as it loads)

if os.environ[TELEMETRY_VAR] == "1":
    onnxruntime.disable_telemetry_events()
