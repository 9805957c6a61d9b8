"""The client's half of `dashboard`: open the page in the user's browser (daemon.md §1.2), or say
where it is when no browser can be opened."""

from __future__ import annotations

import sys


def open_page(url: str) -> bool:
    """Ask the system's browser to show `url`; False (and the address on stderr) when none could."""
    # Only this verb pays for webbrowser's imports.
    import webbrowser

    try:
        opened = webbrowser.open(url, new=2)
    except (webbrowser.Error, OSError):
        opened = False
    if not opened:
        print(f"hippoctl: no browser could be opened; open {url} in one", file=sys.stderr)
    return opened
