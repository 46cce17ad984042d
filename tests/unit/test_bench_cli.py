"""`acm bench` comes from the acm_benchmarks package (benchmarks/, a dev install): with it, every benchmark is a
subcommand; without it (an image, a wheel of ACM), one line says how to install it and the exit code is 2."""

from __future__ import annotations

import sys

import pytest

from acm_benchmarks import BENCHMARKS
from acm_cli.main import EXIT_USAGE, main


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_benchmark_is_an_acm_bench_subcommand(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", name, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: acm bench {name} ")


@pytest.mark.parametrize("argv", [["bench"], ["bench", "traces", "--data", "x.json"], ["bench", "locomo", "--help"]])
def test_without_the_package_acm_bench_says_how_to_install_it(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "acm_benchmarks", None)  # import acm_benchmarks → ModuleNotFoundError
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("acm bench: the benchmarks are not installed")
    assert "make install" in lines[0]
