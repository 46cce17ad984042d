"""Generate the Python code for protos/acm/v1 (``make proto``); the drift test calls it too."""

from __future__ import annotations

import sys
from pathlib import Path


def googleapis_include() -> Path:
    """Where googleapis-common-protos keeps google/api/*.proto (the HTTP rules the gateway's RPCs carry)."""
    from google.api import annotations_pb2

    return Path(annotations_pb2.__file__).parents[2]


def generate(proto_root: Path, out_dir: Path) -> list[Path]:
    """Run protoc (from grpcio-tools) over every .proto under proto_root; return the files written."""
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(str(p.relative_to(proto_root)) for p in proto_root.rglob("*.proto"))
    include = Path(grpc_tools.__file__).parent / "_proto"
    out_dir.mkdir(parents=True, exist_ok=True)
    plugin_dir = Path(sys.executable).parent  # mypy-protobuf installs its plugins beside python
    args = [
        "protoc",
        f"--plugin=protoc-gen-mypy={plugin_dir / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={plugin_dir / 'protoc-gen-mypy_grpc'}",
        f"-I{proto_root}",
        f"-I{include}",
        f"-I{googleapis_include()}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_out={out_dir}",
        f"--mypy_grpc_out={out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {' '.join(args)}")
    package_dirs = {(out_dir / p).parent for p in protos}
    for d in package_dirs:
        (d / "__init__.py").touch()
    return sorted(p for p in out_dir.rglob("*") if p.is_file() and p.suffix in {".py", ".pyi"})


if __name__ == "__main__":
    written = generate(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"generated {len(written)} files")
