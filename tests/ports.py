"""Free loopback ports for the servers the tests start, taken below the kernel's ephemeral range.

A port the kernel hands out for bind(port 0) lies in the ephemeral range, where any outgoing
connection on the machine may take it as its source port in the moment before the server
binds it (seen with four xdist workers: a local-cluster broker, started after its ZooKeeper,
found its port taken). Below that range a port is only ever taken by a bind that names it,
so the remaining risk is two tests drawing the same random port at the same moment.
"""

from __future__ import annotations

import random
import socket

_LOW = 10000  # well-known and registered services below this are left alone
_draw = random.SystemRandom()


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_ports(n: int = 1) -> int:
    """The first of n consecutive free loopback ports."""
    high = _ephemeral_start() - n
    for _ in range(1000):
        if high <= _LOW:  # an unusual port range: the kernel's choice, then
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                base = s.getsockname()[1]
        else:
            base = _draw.randrange(_LOW, high)
        if base + n < 65536 and all(is_free(base + i) for i in range(n)):
            return base
    raise RuntimeError(f"no {n} consecutive free loopback ports")


def free_port() -> int:
    return free_ports(1)
