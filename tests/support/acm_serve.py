"""`acm serve` as a process of its own for a test: a loopback port the kernel picks, a data folder of the test's, the
dev key it writes, stopped at the end. ``env`` adds settings (e.g. ACM_TLS_CERT_FILE); the caller's ACM_* never leak
in. The HTTP/JSON API is off unless ``env`` gives ACM_HTTP_ADDR: without it `acm serve` takes 127.0.0.1:8080 when
free, and two servers started at once on two xdist workers both see it free, so one of them exits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACM = Path(sys.executable).parent / "acm"
DEV_KEY_FILE = "dev-api-key"  # acm_cli.main.DEV_KEY_FILE, where `acm serve` writes its key
# The banner's first line (acm_cli.main.banner) names the address the gateway listens on: port 0 resolved.
LISTENING = re.compile(r"gateway acm\.v1\.Gateway on (\S+),")
HTTP_LISTENING = re.compile(r"HTTP/JSON API on (https?://\S+) ")  # the line before, when it is served


@dataclass(frozen=True)
class AcmServer:
    addr: str
    api_key: str
    data_dir: Path
    http: str = ""  # the HTTP/JSON API's base URL, when ACM_HTTP_ADDR asked for it (port 0 resolved)


@contextmanager
def acm_serve(data_dir: Path, env: Mapping[str, str] | None = None, startup_s: float = 120.0) -> Iterator[AcmServer]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    clean |= {"ACM_DATA_DIR": str(data_dir), "ACM_HTTP_ADDR": "", **(env or {})}
    log = data_dir.parent / f"{data_dir.name}.serve.log"
    with open(log, "wb") as out:
        # Port 0, read back from the banner: a port chosen here and handed over could be taken meanwhile.
        argv = [str(ACM), "serve", "--listen", "127.0.0.1:0"]
        proc = subprocess.Popen(argv, env=clean, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + startup_s
            # The banner's last line comes once the gateway listens.
            while "Ctrl-C" not in (text := log.read_text(errors="replace")):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"acm serve did not start: {text}")
                time.sleep(0.05)
            listening, http = LISTENING.search(text), HTTP_LISTENING.search(text)
            assert listening, text
            key = (data_dir / DEV_KEY_FILE).read_text().strip()
            yield AcmServer(listening.group(1), key, data_dir, http.group(1) if http else "")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
