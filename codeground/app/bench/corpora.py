"""Benchmark corpora, fetched once from the package registries by name and version, never committed.

Each corpus is a source tree as its own repository would have it, unpacked under
``<cache>/corpora/<name>/``:

* ``vllm``: vLLM 0.10.1's PyPI sdist (the recipe of ``shared/bench-data/vllm/README.md``);
* ``zod`` (TypeScript): the npm package of zod 4.1.12, its ``src/`` tree plus README and
  package.json (the compiled ``.js``/``.d.ts`` copies beside it are build output, which a checkout of
  zod does not hold);
* ``pydantic-core`` (Rust): its 2.33.2 sdist from PyPI (``src/*.rs``, Python stubs, tests);
* ``cobra`` (Go): Debian's ``golang-github-spf13-cobra-dev`` 1.6.1, the Go source it installs;
* ``jpype`` (Java): JPype1 1.6.0's sdist from PyPI (Java under ``native/java``, with C++ and Python).

A fetch that fails says which registry and package in one line (``CodegroundError``); nothing retries.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeground.app.errors import CodegroundError

VLLM_VERSION = "0.10.1"


def _pip_sdist(name: str, version: str, dest: Path) -> None:
    """Unpack ``name==version``'s sdist into ``dest``. pip unpacks it, then fails to prepare its
    metadata (the build backend is not installed, by design): the unpacked tree is what we keep."""
    work = Path(tempfile.mkdtemp(prefix=f"codeground-{name}-"))
    cmd = [sys.executable, "-m", "pip", "download", f"{name}=={version}", "--no-deps", "--no-binary", ":all:"]
    cmd += ["--no-build-isolation", "--no-clean", "-d", str(work / "out")]
    subprocess.run(cmd, env={**os.environ, "TMPDIR": str(work)}, capture_output=True, text=True)
    prefix = name.lower().replace("-", "_").replace(".", "_")
    unpacked = sorted(
        p for p in work.glob("pip-download-*/*") if p.name.lower().replace("-", "_").startswith(prefix)
    )
    if not unpacked:
        shutil.rmtree(work, ignore_errors=True)
        raise CodegroundError(f"could not fetch the {name} {version} sdist from PyPI")
    shutil.move(str(unpacked[0]), dest)
    shutil.rmtree(work, ignore_errors=True)


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise CodegroundError(f"could not fetch {what}: `{cmd[0]}` is not installed") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CodegroundError(f"could not fetch {what}: {last}")


def _npm_package(spec: str, keep: tuple[str, ...], dest: Path) -> None:
    """``npm pack`` the package and keep only ``keep`` (paths inside the package) in ``dest``."""
    work = Path(tempfile.mkdtemp(prefix="codeground-npm-"))
    try:
        _run(["npm", "pack", spec, "--silent"], work, f"{spec} from the npm registry")
        (tarball,) = work.glob("*.tgz")
        with tarfile.open(tarball) as tar:
            tar.extractall(work / "x", filter="data")
        package = work / "x" / "package"
        staging = work / "tree"
        staging.mkdir()
        for name in keep:
            if (package / name).exists():
                shutil.move(str(package / name), staging / name)
        shutil.move(str(staging), dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _debian_package(package: str, inside: str, dest: Path) -> None:
    """Download a Debian package (``apt-get download``) and keep the folder ``inside`` of what it installs."""
    work = Path(tempfile.mkdtemp(prefix="codeground-deb-"))
    try:
        _run(["apt-get", "download", package], work, f"{package} from Debian (run `apt-get update` once?)")
        (deb,) = work.glob("*.deb")
        _run(["dpkg-deb", "-x", str(deb), str(work / "x")], work, f"{package}'s files")
        shutil.move(str(work / "x" / inside), dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class Corpus:
    """A benchmark corpus: its name, the language it is there for, and how to fetch it."""

    name: str
    language: str
    source: str
    fetch: Callable[[Path], None]

    def path(self, cache: Path) -> Path:
        return cache / "corpora" / self.name / "tree"

    def ensure(self, cache: Path) -> Path:
        """The corpus' root folder, fetched on first use (atomically: a failed fetch leaves nothing)."""
        root = self.path(cache)
        if root.is_dir():
            return root
        root.parent.mkdir(parents=True, exist_ok=True)
        partial = root.parent / f".partial-{root.name}"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            self.fetch(partial)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        partial.rename(root)
        return root


LANGUAGE_CORPORA: dict[str, Corpus] = {
    c.language: c
    for c in (
        Corpus(
            "zod",
            "typescript",
            "npm zod@4.1.12 (src/, README.md, package.json)",
            lambda dest: _npm_package("zod@4.1.12", ("src", "README.md", "package.json", "LICENSE"), dest),
        ),
        Corpus(
            "pydantic-core",
            "rust",
            "PyPI sdist pydantic-core==2.33.2",
            lambda dest: _pip_sdist("pydantic-core", "2.33.2", dest),
        ),
        Corpus(
            "cobra",
            "go",
            "Debian golang-github-spf13-cobra-dev 1.6.1",
            lambda dest: _debian_package(
                "golang-github-spf13-cobra-dev", "usr/share/gocode/src/github.com/spf13/cobra", dest
            ),
        ),
        Corpus(
            "neuromancer",
            "python",
            "PyPI sdist neuromancer==1.5.6 (package, reST/Markdown docs, example notebooks)",
            lambda dest: _pip_sdist("neuromancer", "1.5.6", dest),
        ),
        Corpus(
            "jpype",
            "java",
            "PyPI sdist JPype1==1.6.0",
            lambda dest: _pip_sdist("JPype1", "1.6.0", dest),
        ),
    )
}


def vllm_corpus(cache: Path) -> Path:
    """The vLLM source tree from its PyPI sdist (recipe of shared/bench-data/vllm/README.md), fetched once.

    It lives at ``corpora/vllm/data/raw/vllm-<version>``, the path the dev sets' gold ``file_path``
    values start with.
    """
    root = cache / "corpora" / "vllm" / "data" / "raw" / f"vllm-{VLLM_VERSION}"
    if (root / "vllm").is_dir():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    _pip_sdist("vllm", VLLM_VERSION, root)
    return root
