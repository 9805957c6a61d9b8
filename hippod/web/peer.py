"""Which user a loopback TCP connection comes from, on Linux: the kernel's table of sockets.

A TCP connection over loopback has two sockets on this machine. The client's own one has the
client's address as its local end, the server's as its remote end, and the uid of the user who made
it. Finding it tells the daemon whether a request without a key comes from the user who owns the
daemon, as SO_PEERCRED does for a Unix socket.

The kernel answers an exact lookup over netlink (sock_diag, what `ss` uses) in microseconds;
`/proc/net/tcp{,6}` lists the same sockets but costs a walk of the whole table (about a millisecond
even when nearly empty), so it is only the fallback. Elsewhere (or with neither readable) the uid
cannot be known, and callers prove themselves with the local token instead (base/local_token.py).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import struct
import sys

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
# <linux/sock_diag.h>, <linux/inet_diag.h>, <linux/netlink.h>
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF
_ALL_STATES = 0xFFFFFFFF
# TCP states (<net/tcp_states.h>) in which a socket is no client: TIME_WAIT and LISTEN.
_TIME_WAIT = 6
_LISTEN = 10
_NOT_A_CALLER = (_TIME_WAIT, _LISTEN)
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
# inet_diag_msg: family, state, timer, retrans; a 48-byte sockid; expires, rqueue, wqueue; uid, inode
_UID_AT = _HEADER.size + 64


Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(host: str) -> Address:
    """The address, an IPv4-mapped IPv6 one as plain IPv4 (the kernel hashes such sockets so)."""
    address = ipaddress.ip_address(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@functools.cache
def available() -> bool:
    """Whether the peer of a loopback connection can be looked up here: tried once, on a connection
    of this process's own (a sandbox may refuse netlink and hide /proc/net even on Linux)."""
    if sys.platform != "linux":
        return False
    try:
        with (
            socket.create_server(("127.0.0.1", 0)) as listener,
            socket.create_connection(listener.getsockname()[:2], timeout=5),
        ):
            accepted, address = listener.accept()
            with accepted:
                return peer_uid(address[:2], accepted.getsockname()[:2]) == own_uid()
    except OSError:
        return False


def own_uid() -> int:
    """The uid this daemon runs as (-1 where there is none)."""
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else -1


def peer_uid(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid owning the socket at `client` that is connected to `server` (this listener's own
    address), or None when no such socket is found (gone already, another network namespace, or
    not Linux)."""
    if sys.platform != "linux":
        return None
    try:
        return _by_netlink(client, server)
    except OSError:
        return _by_table(client, server)
    except ValueError:  # not an IP address
        return None


def _by_netlink(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """An exact lookup (no dump): the kernel finds the one socket whose local end is `client` and
    remote end is `server`, or answers ENOENT."""
    if sys.platform != "linux":
        return None
    source, destination = _address(client[0]), _address(server[0])
    family = socket.AF_INET if isinstance(source, ipaddress.IPv4Address) else socket.AF_INET6
    sockid = (
        struct.pack(">HH", client[1], server[1])
        + source.packed.ljust(16, b"\0")
        + destination.packed.ljust(16, b"\0")
        + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)  # any interface, no cookie
    )
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, _ALL_STATES) + sockid
    message = _HEADER.pack(_HEADER.size + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0) + request
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as diag:
        diag.settimeout(1.0)
        diag.send(message)
        answer = diag.recv(4096)
    if len(answer) < _UID_AT + 4:
        return None  # an error (ENOENT: no such socket)
    _length, kind, _flags, _seq, _pid = _HEADER.unpack_from(answer)
    # The kernel's lookup falls back to a listening socket on the client's address: only the very
    # connection asked for counts, both of its ends as given.
    if kind == _NLMSG_ERROR or answer[_HEADER.size + 1] in _NOT_A_CALLER:
        return None
    if _ends(answer) != ((source, client[1]), (destination, server[1])):
        return None
    uid, inode = struct.unpack_from("=II", answer, _UID_AT)
    # A socket with no file (inode 0) is one its process closed: a TIME_WAIT entry (which the kernel
    # reports as uid 0) or an orphan. It can read no reply, and its uid says nothing of who sent the
    # request: a client that sends and closes at once must not pass for root.
    return int(uid) if inode else None


def _ends(answer: bytes) -> tuple[tuple[Address, int], tuple[Address, int]]:
    """The two ends of the socket an inet_diag_msg describes, an IPv4-mapped address as IPv4 (a
    dual-stack socket reports its addresses so)."""
    at = _HEADER.size
    family = answer[at]
    sport, dport = struct.unpack_from(">HH", answer, at + 4)
    size = 4 if family == socket.AF_INET else 16
    src = _address(str(ipaddress.ip_address(answer[at + 8 : at + 8 + size])))
    dst = _address(str(ipaddress.ip_address(answer[at + 24 : at + 24 + size])))
    return (src, sport), (dst, dport)


def _spelled(host: str) -> set[str]:
    """How /proc/net/tcp{,6} spell this address: each 32-bit word in the machine's byte order; an
    IPv4 address also as an IPv4-mapped IPv6 one (a dual-stack client socket is listed so)."""
    address = _address(host)
    forms = [address.packed]
    if isinstance(address, ipaddress.IPv4Address):
        forms.append(ipaddress.IPv6Address("::ffff:" + str(address)).packed)
    return {
        "".join(f"{int.from_bytes(form[i : i + 4], sys.byteorder):08X}" for i in range(0, len(form), 4))
        for form in forms
    }


def _by_table(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """`peer_uid` by a walk of /proc/net/tcp{,6}, for a kernel whose netlink lookup is refused."""
    local = {f"{a}:{client[1]:04X}" for a in _spelled(client[0])}
    remote = {f"{a}:{server[1]:04X}" for a in _spelled(server[0])}
    for table in TABLES:
        try:
            with open(table, encoding="ascii") as rows:
                next(rows, None)  # the header
                for row in rows:
                    # sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
                    fields = row.split()
                    if len(fields) > 9 and fields[1] in local and fields[2] in remote:
                        closed = int(fields[3], 16) in _NOT_A_CALLER or fields[9] == "0"
                        return None if closed else int(fields[7])
        except OSError:
            continue
    return None
