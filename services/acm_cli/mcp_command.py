"""`acm mcp`: serve ACM's memory to an MCP client (Claude Desktop, an IDE, an agent framework) over stdio or
streamable HTTP, in one scope given by flags or environment (docs/integrations.md). The MCP SDK is the `mcp`
extra (`pip install 'acm[mcp]'`; the dev install has it); the server itself is acm_cli.mcp_server."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

DEFAULT_HTTP = "127.0.0.1:8765"
MISSING = (
    "the MCP SDK is not installed here: install ACM with its mcp extra (`uv pip install -e '.[mcp]'` in a checkout, "
    "or `pip install 'acm[mcp]'`)"
)
_SCOPE_ENV = {
    "customer": "ACM_CUSTOMER_ID",
    "user": "ACM_USER_ID",
    "agent": "ACM_AGENT_ID",
    "session": "ACM_SESSION_ID",
}


def add_parser(
    sub: argparse._SubParsersAction[Any], remote: Callable[..., None], scope_id: Callable[[str], Any]
) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve ACM's memory as MCP tools (stdio or streamable HTTP)",
        description="Serve remember, recall, forget, list_memories and get_memory as MCP tools, over stdio (for a "
        "client that starts `acm mcp` itself) or streamable HTTP at http://HOST:PORT/mcp. Every tool acts in one "
        "scope: --customer and --user (ACM_CUSTOMER_ID, ACM_USER_ID), optionally --agent and --session "
        "(ACM_AGENT_ID, ACM_SESSION_ID; a tool call may name another session). Stdout is the protocol's on stdio: "
        "logs go to the data folder's logs/cli.log.",
    )
    remote(p, scoped=False)
    for short, name, what in (
        ("-c", "customer", "customer id (required)"),
        ("-u", "user", "user id, in that customer (required)"),
        ("-a", "agent", "agent id: its schema decides what is kept"),
        ("-s", "session", "default session id of the tools"),
    ):
        var = _SCOPE_ENV[name]
        p.add_argument(
            short, f"--{name}", type=scope_id(f"{name}_id"), default=os.environ.get(var), help=f"{what}; or {var}"
        )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="default stdio")
    p.add_argument("--listen", metavar="HOST:PORT", default=DEFAULT_HTTP, help=f"http: where (default {DEFAULT_HTTP})")
    p.add_argument("--path", default="/mcp", help="http: the endpoint's path (default /mcp)")
    p.add_argument(
        "--wait", type=float, default=30.0, help="seconds remember and forget wait for ACM to write (default 30)"
    )
    p.set_defaults(run=run)


def _server_module() -> ModuleType:
    try:
        from acm_cli import mcp_server
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "mcp":
            raise  # something else is missing: a bug to see
        from acm_cli.main import UsageError

        raise UsageError(MISSING) from None
    return mcp_server


def _listen(value: str) -> tuple[str, int]:
    from acm_cli.main import UsageError

    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {value!r}: give HOST:PORT, e.g. {DEFAULT_HTTP}")
    return host.strip("[]"), int(port)


async def run(args: argparse.Namespace) -> None:
    from acm_cli import main as cli

    for name in ("customer", "user"):
        if not getattr(args, name):
            raise cli.UsageError(
                f"no {name} id: pass --{name} or set {_SCOPE_ENV[name]} (every tool acts in one scope)"
            )
    host, port = _listen(args.listen)
    if not args.path.startswith("/"):
        raise cli.UsageError(f"--path {args.path!r}: a path starts with /, e.g. /mcp")
    if args.transport == "http":
        _refuse_if_taken(host, port)
    server = _server_module()
    config = server.McpConfig(
        addr=args.addr,
        api_key=cli._api_key(args),
        customer_id=args.customer,
        user_id=args.user,
        agent_id=args.agent or "",
        session_id=args.session or "",
        tls=cli._tls(args),
        wait_s=args.wait,
    )
    if args.transport == "http":  # stdout is free on HTTP; on stdio it is the protocol's, so nothing is said
        print(f"acm mcp: MCP over streamable HTTP on http://{host}:{port}{args.path} for {args.addr}, customer "
              f"{args.customer}, user {args.user}; Ctrl-C stops", file=sys.stderr, flush=True)  # fmt: skip
    await server.serve(config, args.transport, host, port, args.path)


def _refuse_if_taken(host: str, port: int) -> None:
    """One line now, instead of uvicorn's exit after the models and the connection are up."""
    from acm_cli.main import UsageError

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}; choose another with --listen") from None
