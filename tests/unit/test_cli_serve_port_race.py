"""`acm serve` when its default HTTP port is taken after the check and before the bind (two `acm serve` started at
once): the one line names the HTTP address and its setting, not the gRPC address."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

import acm_cli.embedded
import acm_gateway.app
from acm_cli import main as cli
from acm_gateway.app import PortInUse


class _TakenMeanwhile:
    """An EmbeddedAcm whose start finds the HTTP address taken, as the bind after the models load would."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def claim(self) -> None:
        pass

    async def __aenter__(self) -> _TakenMeanwhile:
        raise PortInUse(98, f"{self.settings.http_addr} is already in use")

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        pass


async def test_the_http_port_taken_meanwhile_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ACM_HTTP_ADDR", raising=False)
    monkeypatch.setattr(acm_gateway.app, "refuse_if_in_use", lambda addr: None)  # free when checked
    monkeypatch.setattr(acm_cli.embedded, "EmbeddedAcm", _TakenMeanwhile)
    args = argparse.Namespace(listen="127.0.0.1:0", data_dir=str(tmp_path))
    with pytest.raises(cli.UsageError) as refused:
        await cli._serve(args)
    line = str(refused.value)
    assert cli.DEFAULT_HTTP_ADDR in line and "ACM_HTTP_ADDR" in line, line
    assert "127.0.0.1:0" not in line, line
