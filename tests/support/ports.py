"""A loopback port where nothing listens, for the tests of an unreachable peer (a broker, a service, a server).

A port chosen by binding and closing a socket is free again at once: a server another xdist worker starts with
port 0 may be given it before the test connects, and then the connection is not refused. This one stays bound
(never listening) until the block ends: connections to it are refused and no other socket can bind it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def refusing_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])
