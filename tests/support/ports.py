"""Loopback ports for tests that run next to other xdist workers: one where nothing listens (an unreachable
peer), and ports for server processes that cannot be given port 0.

A port chosen by binding and closing a socket is free again at once: a server another worker starts with port 0
may be given it before the test uses it. refusing_port() stays bound (never listening) until the block ends:
connections to it are refused and no other socket can bind it."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

_LOWEST = 10_000  # below: where servers listen by default (Postgres 5432, Neo4j 7687, Kafka 9092, 8080, ...)


@contextmanager
def refusing_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out by itself (port-0 binds, outgoing connections)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default; BSD and macOS start higher


def unused_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports nothing is bound to now, for processes that cannot listen on port 0 and say
    which port they got (the distributed services are told each other's addresses at start).

    Picked below the kernel's ephemeral range: a port the kernel handed out here and took back could be handed
    to another worker's port-0 server (or an outgoing connection) before the child binds it, seconds later; one
    below the range only collides with another test picking the same number out of thousands."""
    low = _ephemeral_low()
    rng = random.SystemRandom()
    chosen: list[int] = []
    with ExitStack() as held:  # each stays bound until all are chosen: none is chosen twice
        while len(chosen) < n:
            port = rng.randrange(_LOWEST, low) if low - _LOWEST >= 1000 else 0
            probe = held.enter_context(socket.socket())
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue  # taken (a server, or a connection closing on it)
            chosen.append(int(probe.getsockname()[1]))
    return chosen
