"""Generates acm_client/_pb from the repository's protos/ whenever the package is built (wheel or editable)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
PROTOS = HERE.parent.parent / "protos"
# protoc names the imports after the .proto paths (acm/v1/x.proto → `from acm.v1 import x_pb2`); the SDK's copy
# lives in acm_client._pb so that it never needs, nor collides with, the server's `acm` package.
IMPORT = re.compile(r"^from acm\.v1 import ", re.MULTILINE)
PROTO_IMPORT = re.compile(r'^import "(acm/v1/\w+\.proto)";', re.MULTILINE)


def public_protos() -> list[str]:
    """gateway.proto (the public API) and the protos it imports, transitively; the internal ones are left out."""
    found: set[str] = set()
    todo = ["acm/v1/gateway.proto"]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += PROTO_IMPORT.findall((PROTOS / name).read_text())
    return sorted(found)


def generate(out_dir: Path) -> None:
    import grpc_tools
    from grpc_tools import protoc

    if not (PROTOS / "acm" / "v1" / "gateway.proto").is_file():
        sys.exit(f"no acm/v1/gateway.proto under {PROTOS}: acm-client is built from an ACM checkout")
    protos = public_protos()
    with_imports = out_dir / "_protoc"
    with_imports.mkdir(parents=True, exist_ok=True)
    from google.api import annotations_pb2  # googleapis-common-protos: google/api/*.proto (the HTTP rules)

    includes = [PROTOS, Path(grpc_tools.__file__).parent / "_proto", Path(annotations_pb2.__file__).parents[2]]
    args = ["protoc", *(f"-I{d}" for d in includes), f"--python_out={with_imports}", f"--pyi_out={with_imports}"]
    args.append(f"--grpc_python_out={with_imports}")
    if protoc.main([*args, *protos]) != 0:
        sys.exit(f"protoc failed: {' '.join(args)}")
    for generated in sorted((with_imports / "acm" / "v1").glob("*.py*")):
        text = IMPORT.sub("from acm_client._pb import ", generated.read_text())
        (out_dir / generated.name).write_text(text)
        generated.unlink()
    (out_dir / "__init__.py").write_text('"""Generated from protos/acm/v1 when acm-client is built; not edited."""\n')
    for leftover in sorted(with_imports.rglob("*"), reverse=True):
        leftover.rmdir() if leftover.is_dir() else leftover.unlink()
    with_imports.rmdir()


if __name__ == "__main__":  # the build backend runs this file as __main__; tests import generate() alone
    # Before setup() rather than in build_py: setuptools checks that every package folder exists before it
    # builds. Into the source folder (git ignores it): an editable install imports from there, a wheel copies it.
    generate(HERE / "acm_client" / "_pb")
    setup()
