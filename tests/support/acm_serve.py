"""`acm serve` as a process of its own for a test: a free loopback port, a data folder of the test's, the dev key
it writes, stopped at the end. ``env`` adds settings (e.g. ACM_TLS_CERT_FILE); the caller's ACM_* never leak in."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACM = Path(sys.executable).parent / "acm"
DEV_KEY_FILE = "dev-api-key"  # acm_cli.main.DEV_KEY_FILE, where `acm serve` writes its key


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class AcmServer:
    addr: str
    api_key: str
    data_dir: Path


@contextmanager
def acm_serve(data_dir: Path, env: Mapping[str, str] | None = None, startup_s: float = 120.0) -> Iterator[AcmServer]:
    addr = f"127.0.0.1:{free_port()}"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    clean |= {"ACM_DATA_DIR": str(data_dir), **(env or {})}
    log = data_dir.parent / f"{data_dir.name}.serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(ACM), "serve", "--listen", addr], env=clean, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + startup_s
            # The banner's last line comes once the gateway listens.
            while "Ctrl-C" not in log.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"acm serve did not start: {log.read_text(errors='replace')}")
                time.sleep(0.05)
            yield AcmServer(addr, (data_dir / DEV_KEY_FILE).read_text().strip(), data_dir)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
