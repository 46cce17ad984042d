"""The OpenAPI 3 document of the HTTP/JSON API (docs/openapi.json), generated from the gateway's google.api.http
rules by gnostic's protoc-gen-openapi (a maintained generator, a Go module): `make proto` writes it, and the drift
test compares it with a fresh one.

The plugin is built once with the Go toolchain into the venv's bin (``go install``, pinned below); a different
version found there is rebuilt, so every machine writes the same document."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

PLUGIN_MODULE = "github.com/google/gnostic"
PLUGIN_VERSION = "v0.7.1"
PLUGIN = f"{PLUGIN_MODULE}/cmd/protoc-gen-openapi@{PLUGIN_VERSION}"
GATEWAY_PROTO = "acm/v1/gateway.proto"
# gnostic's options: enums as their names and google.rpc.Status as every error's body, as acm_gateway.http sends.
OPTIONS = "title=ACM Gateway,version=v1,enum_type=string,default_response=true"
GO_TIMEOUT_S = 600.0  # a first build downloads the module and its dependencies from the Go proxy


class PluginUnavailable(RuntimeError):
    """protoc-gen-openapi is not installed and cannot be built (no Go toolchain, or the build failed)."""


def _go() -> str:
    """The Go toolchain: on PATH, else where its official archive installs (a shell without /usr/local/go/bin)."""
    return shutil.which("go") or "/usr/local/go/bin/go"


def _installed_version(plugin: Path) -> str:
    """The gnostic version ``plugin`` was built from ("" when it is not a Go binary of that module)."""
    try:
        out = subprocess.run([_go(), "version", "-m", str(plugin)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == "mod" and fields[1] == PLUGIN_MODULE:
            return fields[2]
    return ""


def plugin_path() -> Path:
    """The pinned protoc-gen-openapi, built into the venv's bin when missing or of another version."""
    bin_dir = Path(sys.executable).parent
    plugin = bin_dir / "protoc-gen-openapi"
    if plugin.is_file() and _installed_version(plugin) == PLUGIN_VERSION:
        return plugin
    env = {**os.environ, "GOBIN": str(bin_dir)}
    try:
        done = subprocess.run([_go(), "install", PLUGIN], env=env, capture_output=True, text=True, timeout=GO_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PluginUnavailable(f"cannot build {PLUGIN} (is Go installed?): {exc}") from None
    if done.returncode != 0:
        raise PluginUnavailable(f"go install {PLUGIN} failed: {done.stderr.strip()}")
    return plugin


def _security(doc: dict[str, Any]) -> None:
    """The API key, as the gRPC API takes it (gnostic writes no security schemes)."""
    doc.setdefault("components", {})["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>"},
        "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
    }
    doc["security"] = [{"bearer": []}, {"apiKey": []}]


def document(proto_root: Path) -> dict[str, Any]:
    """The OpenAPI document of acm.v1.Gateway's HTTP rules."""
    import grpc_tools
    from grpc_tools import protoc

    from acm.protogen import googleapis_include

    # Go import paths for our files, which declare none (only the plugin's Go code generator asks for them).
    go_packages = ",".join(f"M{p.relative_to(proto_root)}=acm/v1" for p in sorted(proto_root.rglob("*.proto")))
    with tempfile.TemporaryDirectory() as out:
        args = [
            "protoc",
            f"--plugin=protoc-gen-openapi={plugin_path()}",
            f"-I{proto_root}",
            f"-I{Path(grpc_tools.__file__).parent / '_proto'}",
            f"-I{googleapis_include()}",
            f"--openapi_out={out}",
            f"--openapi_opt={OPTIONS},{go_packages}",
            GATEWAY_PROTO,
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed: {' '.join(args)}")
        doc: dict[str, Any] = yaml.safe_load((Path(out) / "openapi.yaml").read_text())
    _security(doc)
    return doc


def render(proto_root: Path) -> str:
    return json.dumps(document(proto_root), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    proto_root, target = Path(sys.argv[1]), Path(sys.argv[2])
    target.write_text(render(proto_root))
    print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
