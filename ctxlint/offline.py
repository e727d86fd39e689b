"""ctxlint reads private logs and never talks to the network: make that a property of the process."""

from __future__ import annotations

import socket


class NetworkForbidden(OSError):
    pass


def _refuse(*args, **kwargs):
    raise NetworkForbidden("ctxlint makes no network connections")


def forbid_network() -> None:
    """Refuse every outgoing connection and name lookup from this process."""
    socket.socket.connect = _refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = _refuse  # type: ignore[method-assign]
    socket.create_connection = _refuse  # type: ignore[assignment]
    socket.getaddrinfo = _refuse  # type: ignore[assignment]
