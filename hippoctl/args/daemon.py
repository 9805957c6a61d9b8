"""Arguments of `daemon`: start, stop, restart and inspect the daemon, and install it as a service.

The client runs every action itself or builds its request (cli.py): the family has no builder.
"""

from __future__ import annotations

from hippoctl.args.registry import AddVerb, register


def add_verbs(verb: AddVerb) -> None:
    """Register `daemon` on the hippoctl parser."""
    p = verb(
        "daemon",
        "control and inspect the daemon",
        "hippoctl daemon status",
        "hippoctl daemon restart",
        "hippoctl daemon install-service --socket-activation",
    )
    p.add_argument(
        "action",
        choices=["start", "stop", "restart", "status", "install-service", "uninstall-service"],
        help="start, stop or restart it; status; install-service or uninstall-service (start at login)",
    )
    p.add_argument(
        "--socket-activation", action="store_true", help="install-service: start on the first connection"
    )


register("daemon", add_verbs, {})
