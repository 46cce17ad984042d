"""The Python SDK's protobuf code (acm_client._pb, generated when acm-client is built) must be what protos/ makes
now: after a change to a public .proto, `make install` rebuilds it; a stale copy would otherwise clash with
acm.v1 in the descriptor pool of any process that imports both."""

import importlib.util
from pathlib import Path

import acm_client._pb

ROOT = Path(__file__).resolve().parents[2]


def test_the_sdk_stubs_match_the_protos(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("acm_client_setup", ROOT / "clients/python/setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    setup.generate(tmp_path)
    installed = Path(acm_client._pb.__file__).parent
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert "gateway_pb2.py" in fresh and "gateway_pb2_grpc.py" in fresh, fresh
    stale = [name for name in fresh if (installed / name).read_bytes() != (tmp_path / name).read_bytes()]
    assert not stale, f"acm_client's generated code is out of date, run `make install`: {stale}"
