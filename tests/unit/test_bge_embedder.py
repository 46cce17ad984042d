"""The bge embedders from the models folder `make install` filled (acm.models): CLS pooling, L2 normalisation,
the query prefix, the checked fetch, and the error that names the install command. Offline throughout."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acm.adapters.embedders import EMBEDDERS, MiniLMEmbedder, OnnxEmbedder, build_embedder, pooled
from acm.models import (
    BGE_QUERY_PREFIX,
    INSTALL_COMMAND,
    MODELS,
    ModelMissing,
    default_models_dir,
    fetch,
    hugging_face_paths,
    locate,
    sha256_of,
)
from acm.ports.embedder import Embedder

INT8 = "bge-small-en-v1.5-int8"
FP32 = "bge-small-en-v1.5"
ZH = "bge-small-zh-v1.5-int8"


def no_network(mp: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the embedder tried to open a network connection")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket, "create_connection", refuse)


def load(name: str) -> OnnxEmbedder:
    try:
        spec, onnx, tokenizer = locate(name)
    except ModelMissing as e:
        pytest.fail(f"{e} (the models folder is filled by `make install`)")
    return OnnxEmbedder(spec, onnx, tokenizer)


@pytest.fixture(scope="module")
def int8() -> Iterator[OnnxEmbedder]:
    with pytest.MonkeyPatch.context() as mp:
        no_network(mp)
        yield load(INT8)


@pytest.fixture(scope="module")
def fp32() -> OnnxEmbedder:
    return load(FP32)


def raw_states(e: OnnxEmbedder, text: str) -> np.ndarray[Any, Any]:
    """The graph's token states for one text, straight from ONNX Runtime: the reference for pooling."""
    ids = np.asarray([e._tokenizer.encode(text).ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    [states] = e._session.run(None, feed)
    return np.asarray(states[0])


def test_registered_under_acm_embedder_names(int8: OnnxEmbedder) -> None:
    assert EMBEDDERS == (FP32, INT8, ZH, "all-minilm-l6-v2", "use-multilingual-v3")
    port: Embedder = int8
    assert (port.name, port.dim) == (INT8, 384)
    assert build_embedder(INT8).name == INT8
    assert build_embedder("minilm") is build_embedder("minilm")  # one instance per process
    assert isinstance(build_embedder("all-minilm-l6-v2"), MiniLMEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        build_embedder("bge-large")


@pytest.mark.parametrize("which", ["int8", "fp32"])
def test_a_document_is_its_cls_state_normalised(which: str, request: pytest.FixtureRequest) -> None:
    e: OnnxEmbedder = request.getfixturevalue(which)
    text = "Caroline went to an LGBTQ support group yesterday."
    states = raw_states(e, text)
    cls = states[0] / np.linalg.norm(states[0])
    mean = states.mean(axis=0) / np.linalg.norm(states.mean(axis=0))
    [vector] = e.embed([text])
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert vector == pytest.approx(cls.tolist(), abs=1e-5)  # [CLS], not the mean of the tokens
    assert float(np.dot(vector, mean)) < 0.999


def test_a_query_is_prefixed_with_the_instruction(int8: OnnxEmbedder) -> None:
    question = "Where did Caroline go yesterday?"
    [query] = int8.embed_query([question])
    assert query == pytest.approx(int8.embed([BGE_QUERY_PREFIX + question])[0], abs=1e-6)
    assert float(np.dot(query, int8.embed([question])[0])) < 0.99  # the prefix changes the vector
    # Queries and passages share one space: the passage that answers is the nearer one.
    answer, other = int8.embed(
        ["Caroline: I went to a LGBTQ support group yesterday.", "Melanie: The lake was cold this morning."]
    )
    assert float(np.dot(query, answer)) > float(np.dot(query, other)) + 0.1


def test_chinese_model_has_its_own_prefix_and_dimension() -> None:
    e = load(ZH)
    assert e.dim == 512 and MODELS[ZH].query_prefix != BGE_QUERY_PREFIX
    docs = e.embed(["猫坐在垫子上。", "我昨天去了北京。"])
    [query] = e.embed_query(["你昨天去了哪里？"])
    assert len(query) == 512 and float(np.dot(query, docs[1])) > float(np.dot(query, docs[0]))


def test_padding_and_batching_do_not_change_a_vector(fp32: OnnxEmbedder) -> None:
    texts = ["Caroline went hiking.", "Caroline went hiking with her friends from the support group last weekend."]
    together = fp32.embed(texts)
    alone = [fp32.embed([t])[0] for t in texts]
    assert np.allclose(together, alone, atol=1e-5)
    long = fp32.embed(["word " * 2000])  # truncated at 512 tokens, not an error
    assert len(long[0]) == 384 and fp32.embed([]) == [] and fp32.embed_query([]) == []


def test_pooling_modes() -> None:
    states = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.asarray([[1, 1, 0], [1, 1, 1]], dtype=np.int64)
    assert pooled(states, mask, "cls").tolist() == [[0, 1], [6, 7]]
    assert pooled(states, mask, "mean").tolist() == [[1, 2], [8, 9]]  # padding left out of the mean
    with pytest.raises(ValueError):
        pooled(states, mask, "max")


# --- the models folder and where the files come from ---------------------------------------------------------


def test_a_missing_model_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing, match="make install") as info:
        build_embedder(INT8, 1, tmp_path)
    assert INSTALL_COMMAND in str(info.value) and str(tmp_path / INT8) in str(info.value)


def test_models_dir_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACM_MODELS_DIR", str(tmp_path))
    assert default_models_dir() == tmp_path
    monkeypatch.delenv("ACM_MODELS_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_models_dir() == tmp_path / "cache" / "acm" / "models"


def test_fetch_is_checked_and_idempotent(tmp_path: Path) -> None:
    # From the jar Maven already holds (make install fetched it): no network, no mvn run.
    assert fetch([ZH], tmp_path, mvn="no-such-mvn", log=False) == [ZH]
    folder = tmp_path / ZH
    assert sha256_of(folder / "model.onnx") == MODELS[ZH].onnx_sha256
    assert fetch([ZH], tmp_path, mvn="no-such-mvn", log=False) == []  # present and valid: skipped
    (folder / "tokenizer.json").write_text("{}")  # damaged: fetched again
    assert fetch([ZH], tmp_path, mvn="no-such-mvn", log=False) == [ZH]
    assert sha256_of(folder / "tokenizer.json") == MODELS[ZH].tokenizer_sha256
    with pytest.raises(ValueError, match="unknown model"):
        fetch(["no-such-model"], tmp_path, log=False)


def test_a_bad_jar_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = MODELS[ZH]
    m2 = tmp_path / "m2"
    jar = m2 / "dev" / "langchain4j" / spec.artifact / "0.36.2" / f"{spec.artifact}-0.36.2.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"not the jar")
    monkeypatch.setenv("ACM_M2_REPOSITORY", str(m2))
    with pytest.raises(ModelMissing, match="Maven"):
        fetch([ZH], tmp_path / "models", mvn="no-such-mvn", log=False)
    assert not (tmp_path / "models" / ZH / "model.onnx").exists()


def test_hugging_face_by_name_from_its_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The production path that loads by name, offline: a Hub cache holding the same files (huggingface_hub's
    layout) is read and checked; nothing in it, and the error names the install command."""
    spec = MODELS[INT8]
    _, onnx, tokenizer = locate(INT8)
    snapshot = tmp_path / f"models--{spec.hf_repo.replace('/', '--')}" / "snapshots" / ("0" * 40)
    (snapshot / "onnx").mkdir(parents=True)
    shutil.copy(tokenizer, snapshot / "tokenizer.json")
    (snapshot / spec.hf_onnx).symlink_to(onnx)
    (tmp_path / f"models--{spec.hf_repo.replace('/', '--')}" / "refs").mkdir()
    (tmp_path / f"models--{spec.hf_repo.replace('/', '--')}" / "refs" / "main").write_text("0" * 40)
    no_network(monkeypatch)
    found = hugging_face_paths(spec, tmp_path, offline=True)
    assert [sha256_of(p) for p in found] == [spec.onnx_sha256, spec.tokenizer_sha256]
    with pytest.raises(ModelMissing, match="make install"):
        hugging_face_paths(MODELS[FP32], tmp_path, offline=True)
    (snapshot / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelMissing, match="SHA-256"):
        hugging_face_paths(spec, tmp_path, offline=True)
