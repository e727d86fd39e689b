from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
REAL_LOGS = SHARED / "real-logs"

needs_real_logs = pytest.mark.skipif(not REAL_LOGS.is_dir(), reason=f"../shared/real-logs is absent ({REAL_LOGS}); real-traffic tests need it")
needs_sarif_schema = pytest.mark.skipif(not (SHARED / "schemas" / "sarif-2.1.0.json").is_file(), reason="../shared/schemas/sarif-2.1.0.json is absent")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Every test runs as the CLI does: with the network refused."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network refused in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
