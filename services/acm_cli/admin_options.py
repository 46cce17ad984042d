"""What the administration commands (acm db roles, acm db entities, acm reindex) share: a parser that shows its
module's docstring as written, and options read from the environment when not given."""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from typing import Any


def admin_command(
    sub: argparse._SubParsersAction[Any],
    name: str,
    help_text: str,
    doc: str | None,
    run: Callable[[argparse.Namespace], Awaitable[None]],
) -> argparse.ArgumentParser:
    """``doc``: the command's module docstring, its --help text (kept as written: it has lists and steps)."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.set_defaults(run=run)
    return p


def env_option(p: argparse.ArgumentParser, flag: str, env: str, what: str) -> None:
    """``flag``, by default the environment variable ``env``; its help says so."""
    p.add_argument(flag, default=os.environ.get(env), help=f"{what} (default {env})")
