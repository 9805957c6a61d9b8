"""Request bodies that speak to the daemon itself: readiness, its status, and stopping it; part of
messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body


class Ping(Body):
    """`version` and readiness probes."""

    on_team = True


class DaemonStatus(Body):
    on_team = True


class Shutdown(Body):
    on_team = True


# Every request body of this family, for messages.RequestBody.
BODIES = Ping | DaemonStatus | Shutdown
