"""Tests for components.walker.RepositoryWalker: every rule in its docstring has a test here."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components import walker as walker_module
from codeground.components.walker import RepositoryWalker

PY = b"def f():\n    return 1\n"


def write(root: Path, rel: str, data: bytes | str = PY) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def walk(root: Path, **kwargs) -> tuple[dict[str, object], dict[str, str], dict]:
    """Run the walker; return ({path: stream}, {skipped path: reason}, report)."""
    result = RepositoryWalker(**kwargs).run(root=str(root))
    files = {s.meta["file_path"]: s for s in result["files"]}
    skipped = {path: reason for path, reason in result["report"]["skipped_files"]}
    return files, skipped, result["report"]


def assert_counts_consistent(report: dict) -> None:
    assert report["seen"] == report["indexed"] + sum(report["skipped"].values())
    assert len(report["skipped_files"]) == sum(report["skipped"].values())


def test_file_paths_relative_posix_and_sorted(tmp_path: Path) -> None:
    for rel in ["zeta.py", "pkg/sub/b.py", "pkg/a.py", "Alpha.md", "pkg/sub/a.py"]:
        write(tmp_path, rel)
    files, _, report = walk(tmp_path)
    paths = list(files)
    assert paths == sorted(paths)
    assert set(paths) == {"zeta.py", "pkg/sub/b.py", "pkg/a.py", "Alpha.md", "pkg/sub/a.py"}
    assert all("\\" not in p and not p.startswith("/") for p in paths)
    assert report["root"] == str(tmp_path.resolve())


def test_bytestream_carries_raw_bytes_and_sha256(tmp_path: Path) -> None:
    import hashlib

    data = "# héllo\nx = 'ü'\n".encode()
    write(tmp_path, "m.py", data)
    files, _, _ = walk(tmp_path)
    stream = files["m.py"]
    assert stream.data == data
    assert stream.meta == {"file_path": "m.py", "sha256": hashlib.sha256(data).hexdigest()}


def test_mime_types_by_suffix(tmp_path: Path) -> None:
    cases = {
        "a.py": "text/x-python",
        "a.pyi": "text/x-python",
        "nb.ipynb": "application/x-ipynb+json",
        "README.md": "text/markdown",
        "guide.markdown": "text/markdown",
        "index.rst": "text/x-rst",
        "UPPER.PY": "text/x-python",
        "kernel.cu": "text/plain",
        "conf.toml": "text/plain",
        "requirements.txt": "text/plain",
        "CMakeLists.txt": "text/plain",
        "Dockerfile": "text/plain",
        "docker/Dockerfile.cpu": "text/plain",
        "Makefile": "text/plain",
        "web/app.js": "text/javascript",
        "web/App.jsx": "text/javascript",
        "web/m.mjs": "text/javascript",
        "web/c.cjs": "text/javascript",
        "web/app.ts": "text/x-typescript",
        "web/App.tsx": "text/x-typescript",
        "cmd/main.go": "text/x-go",
        "src/lib.rs": "text/x-rust",
        "src/main/java/A.java": "text/x-java",
    }
    for rel in cases:
        write(tmp_path, rel, "content\n")
    for rel in ["data.json", "image.svg", "LICENSE", "script.jinja"]:
        write(tmp_path, rel, "content\n")
    files, skipped, _ = walk(tmp_path)
    assert {p: s.mime_type for p, s in files.items()} == cases
    assert skipped == {p: "unsupported_type" for p in ["data.json", "image.svg", "LICENSE", "script.jinja"]}


def test_text_extensions_param_replaces_plain_text_list(tmp_path: Path) -> None:
    write(tmp_path, "data.json", "{}\n")
    write(tmp_path, "kernel.cu", "int x;\n")
    write(tmp_path, "a.py")
    files, skipped, _ = walk(tmp_path, text_extensions=[".JSON"])
    assert files["data.json"].mime_type == "text/plain"
    assert files["a.py"].mime_type == "text/x-python"  # dispatch for code/docs is not configurable
    assert skipped == {"kernel.cu": "unsupported_type"}


def test_vcs_and_venv_dirs_pruned(tmp_path: Path) -> None:
    pruned = [
        ".git",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        "pkg.egg-info",
        ".mypy_cache",
        ".ipynb_checkpoints",
        ".codeground",
        "lib/site-packages",
        "sub/.tox",
        ".idea",
        ".vscode",
    ]
    for d in pruned:
        write(tmp_path, f"{d}/inner/mod.py")
    write(tmp_path, "src/keep.py")
    write(tmp_path, "src/build.py")  # a *file* named like a pruned dir is not pruned
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"src/keep.py", "src/build.py"}
    assert report["seen"] == 2  # files in pruned dirs are not counted at all
    assert skipped == {}


def test_generated_and_vendored_trees_are_pruned_and_counted(tmp_path: Path) -> None:
    for d in ["web/node_modules", "node_modules", "dist", "go/vendor", "rust/target", "build"]:
        write(tmp_path, f"{d}/lib/x.js", "export const x = 1;\n")
    write(tmp_path, "src/vendor.go", "package src\n")  # a file named like one is kept
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"src/vendor.go"}
    assert report["pruned"] == {"build": 1, "dist": 1, "node_modules": 2, "target": 1, "vendor": 1}
    assert skipped == {}
    assert_counts_consistent(report)


def test_minified_bundles_are_skipped_by_name_or_by_their_lines(tmp_path: Path) -> None:
    write(tmp_path, "static/jquery.min.js", "function a(){}\n")
    write(tmp_path, "static/app.bundle.js", "function a(){}\n")
    write(tmp_path, "static/app.js", "var a=1;" * 600)  # 4.8 KB on one line: minified, whatever its name
    write(tmp_path, "src/app.ts", "export const a = 1;\n" * 300)  # long file, short lines
    write(tmp_path, "data/one_line.txt", "x" * 5000)  # plain text is not judged by its lines
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"src/app.ts", "data/one_line.txt"}
    assert skipped == {
        p: "minified" for p in ["static/jquery.min.js", "static/app.bundle.js", "static/app.js"]
    }
    assert_counts_consistent(report)


def test_counts_add_up(tmp_path: Path) -> None:
    write(tmp_path, "ok.py")
    write(tmp_path, "img.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(tmp_path, "bin.py", b"x = 1\x00\x00")
    write(tmp_path, "latin.py", "x = 'é'\n".encode("latin-1"))
    write(tmp_path, "empty.py", b"   \n\t\n")
    write(tmp_path, "big.py", b"x = 1\n" * 100)
    write(tmp_path, ".env", "TOKEN=abc\n")
    write(tmp_path, "uv.lock", "lock\n")
    write(tmp_path, "skipme.py")
    write(tmp_path, ".gitignore", "skipme.py\n")
    write(tmp_path, ".git/HEAD", "ref\n")
    os.symlink(tmp_path / "ok.py", tmp_path / "link.py")
    files, skipped, report = walk(tmp_path, max_file_bytes=300)
    assert set(files) == {"ok.py"}
    assert skipped == {
        "img.png": "unsupported_type",
        "bin.py": "binary",
        "latin.py": "not_utf8",
        "empty.py": "empty",
        "big.py": "too_large",
        ".env": "secret",
        "uv.lock": "lockfile",
        "skipme.py": "ignored",
        ".gitignore": "unsupported_type",
        "link.py": "symlink",
    }
    assert report["seen"] == 11
    assert report["indexed"] == 1
    assert_counts_consistent(report)
    json.dumps(report)  # JSON-serialisable


def test_binary_and_non_utf8_files_skipped_and_counted(tmp_path: Path) -> None:
    write(tmp_path, "nul_early.py", b"x = 1\n\x00rest\n")
    write(tmp_path, "nul_late.py", b"# " + b"a" * 9000 + b"\n\x00\n")  # NUL past 8 KiB: not "binary"...
    write(tmp_path, "cp1252.md", "caf\xe9\n".encode("cp1252"))
    write(tmp_path, "bom.py", b"\xef\xbb\xbfx = 1\n")  # UTF-8 with BOM is valid UTF-8
    files, skipped, report = walk(tmp_path)
    assert skipped["nul_early.py"] == "binary"
    assert skipped["cp1252.md"] == "not_utf8"
    assert "nul_late.py" in files  # ...and NUL is valid UTF-8, so it is indexed
    assert "bom.py" in files
    assert report["skipped"] == {"binary": 1, "not_utf8": 1}


def test_empty_and_whitespace_only_files_skipped(tmp_path: Path) -> None:
    write(tmp_path, "pkg/__init__.py", b"")
    write(tmp_path, "blank.md", "\n \u00a0\u3000\n")  # Unicode whitespace counts too
    write(tmp_path, "pkg/real.py")
    files, skipped, _ = walk(tmp_path)
    assert set(files) == {"pkg/real.py"}
    assert skipped == {"pkg/__init__.py": "empty", "blank.md": "empty"}


def test_oversize_file_skipped_with_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "big.py", b"x = 1\n" * 20)  # 120 bytes
    write(tmp_path, "exact.py", b"x" * 99 + b"\n")  # 100 bytes: at the limit is allowed
    opened: list[str] = []
    real_open = os.open

    def spy_open(path, *args, **kwargs):
        opened.append(os.path.basename(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(walker_module.os, "open", spy_open)
    files, skipped, _ = walk(tmp_path, max_file_bytes=100)
    assert skipped == {"big.py": "too_large"}
    assert set(files) == {"exact.py"}
    assert "big.py" not in opened  # decided from stat, never read


def test_max_file_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_file_bytes"):
        RepositoryWalker(max_file_bytes=0)


def test_gitignore_root_rules_and_negation(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log.py\n!keep.log.py\ngenerated/\n/anchored.py\n")
    write(tmp_path, "a.log.py")
    write(tmp_path, "keep.log.py")
    write(tmp_path, "generated/out.py")
    write(tmp_path, "anchored.py")
    write(tmp_path, "sub/anchored.py")  # anchored pattern applies to the root only
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"keep.log.py", "sub/anchored.py"}
    assert skipped["a.log.py"] == "ignored"
    assert skipped["anchored.py"] == "ignored"
    assert "generated/out.py" not in skipped  # ignored directory is pruned, its files counted nowhere
    assert_counts_consistent(report)


def test_gitignore_nested_directory_rules_respected(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.gen.py\n")
    write(tmp_path, "pkg/.gitignore", "/local.py\n!special.gen.py\ncache/\n")
    write(tmp_path, "pkg/local.py")  # ignored by pkg/.gitignore (anchored to pkg/)
    write(tmp_path, "local.py")  # not affected by pkg/.gitignore
    write(tmp_path, "pkg/deep/local.py")  # anchored pattern: not matched one level deeper
    write(tmp_path, "pkg/x.gen.py")  # root rule applies in subdirectories
    write(tmp_path, "pkg/special.gen.py")  # deeper negation overrides the root rule
    write(tmp_path, "x.gen.py")
    write(tmp_path, "pkg/cache/c.py")
    write(tmp_path, "other/cache/c.py")  # pkg's rule does not leak into siblings
    files, skipped, _ = walk(tmp_path)
    assert set(files) == {"local.py", "pkg/deep/local.py", "pkg/special.gen.py", "other/cache/c.py"}
    assert skipped["pkg/local.py"] == "ignored"
    assert skipped["pkg/x.gen.py"] == "ignored"
    assert skipped["x.gen.py"] == "ignored"
    assert "pkg/cache/c.py" not in files


def test_git_info_exclude_respected(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "scratch.py\n")
    write(tmp_path, "scratch.py")
    write(tmp_path, "main.py")
    files, skipped, _ = walk(tmp_path)
    assert set(files) == {"main.py"}
    assert skipped == {"scratch.py": "ignored"}


def test_user_ignore_patterns_add_to_defaults(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "from_gitignore.py\n")
    write(tmp_path, "from_gitignore.py")
    write(tmp_path, "tests/fixtures/f.py")
    write(tmp_path, "notes.md", "# n\n")
    write(tmp_path, "main.py")
    write(tmp_path, ".venv/lib.py")
    # Negating a default-pruned dir does not bring it back: the user list adds, never replaces.
    files, skipped, report = walk(tmp_path, ignore=["tests/fixtures/", "*.md", "!.venv/"])
    assert set(files) == {"main.py"}
    assert skipped["from_gitignore.py"] == "ignored"
    assert skipped["notes.md"] == "ignored"
    assert not any(p.startswith((".venv/", "tests/")) for p in list(files) + list(skipped))
    assert_counts_consistent(report)


def test_codegroundignore_file_respected(tmp_path: Path) -> None:
    write(tmp_path, ".codegroundignore", "# comment\nbenchmarks/\n*_pb2.py\n")
    write(tmp_path, "benchmarks/bench.py")
    write(tmp_path, "proto/api_pb2.py")
    write(tmp_path, "proto/api.py")
    write(tmp_path, "extra.py")
    files, skipped, _ = walk(tmp_path, ignore=["extra.py"])
    assert set(files) == {"proto/api.py"}
    assert skipped["proto/api_pb2.py"] == "ignored"
    assert skipped["extra.py"] == "ignored"
    assert skipped[".codegroundignore"] == "unsupported_type"


def test_user_negation_can_reinclude_gitignored_file(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.gen.py\n")
    write(tmp_path, "keep.gen.py")
    files, _, _ = walk(tmp_path, ignore=["!keep.gen.py"])
    assert "keep.gen.py" in files


@pytest.mark.parametrize(
    "name",
    (
        [
            ".env",
            ".env.local",
            "server.pem",
            "tls.key",
            "cert.p12",
            "cert.pfx",
            "id_rsa",
            "id_rsa.pub",
            "id_ed25519",
            "id_ecdsa",
            "id_dsa",
            "release.keystore",
            "store.jks",
            "credentials.json",
            "secrets.json",
            "secrets.yaml",
            "secrets.yml",
            ".netrc",
            ".npmrc",
            ".pypirc",
            "vault.kdbx",
        ]
    ),
)
def test_secrets_never_indexed_even_when_user_ignore_negates_them(tmp_path: Path, name: str) -> None:
    write(tmp_path, f"cfg/{name}", "SECRET=1\n")
    write(tmp_path, ".gitignore", f"!{name}\n")
    # Even with every negation and a text_extensions list that would otherwise accept the file.
    exts = [".json", ".yaml", ".yml", ".pub", ".key", ".pem", ".local", ".p12", ".pfx", ".jks", ".kdbx"]
    files, skipped, report = walk(tmp_path, ignore=[f"!{name}", f"!cfg/{name}"], text_extensions=exts)
    assert f"cfg/{name}" not in files
    assert skipped[f"cfg/{name}"] == "secret"
    assert_counts_consistent(report)


@pytest.mark.parametrize(
    "name",
    [
        "uv.lock",
        "poetry.lock",
        "Cargo.lock",
        "Pipfile.lock",
        "yarn.lock",
        "package-lock.json",
        "pnpm-lock.yaml",
        "custom.lock",
    ],
)
def test_lock_files_never_indexed(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "lock\n")
    files, skipped, _ = walk(tmp_path, ignore=[f"!{name}"], text_extensions=[".lock", ".json", ".yaml"])
    assert files == {}
    assert skipped == {name: "lockfile"}


def test_symlink_pointing_outside_repo_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret_notes.py")
    repo = tmp_path / "repo"
    write(repo, "main.py")
    os.symlink(outside / "secret_notes.py", repo / "linked.py")
    os.symlink(outside, repo / "linked_dir")
    os.symlink(repo / "main.py", repo / "inside_link.py")  # even a link inside the repo is not read
    files, skipped, report = walk(repo)
    assert set(files) == {"main.py"}
    assert skipped == {"linked.py": "symlink", "linked_dir": "symlink", "inside_link.py": "symlink"}
    assert report["seen"] == 4


def test_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    write(tmp_path, "a/mod.py")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    os.symlink(tmp_path / "self", tmp_path / "self")  # a link to itself
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(walk(tmp_path)[2]), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "walker hung on a symlink loop"
    assert result["indexed"] == 1
    assert result["skipped"] == {"symlink": 2}


def test_root_given_through_symlink_is_resolved(tmp_path: Path) -> None:
    write(tmp_path, "real/main.py")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    files, _, report = walk(tmp_path / "alias")
    assert set(files) == {"main.py"}
    assert report["root"] == str((tmp_path / "real").resolve())


def test_root_that_is_not_a_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        RepositoryWalker().run(root=str(tmp_path / "missing"))


def test_unreadable_file_skipped_with_reason(tmp_path: Path) -> None:
    path = write(tmp_path, "locked.py")
    write(tmp_path, "open.py")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running with privileges that ignore file permissions (root)")
        files, skipped, report = walk(tmp_path)
    finally:
        path.chmod(0o644)
    assert set(files) == {"open.py"}
    assert skipped == {"locked.py": "unreadable"}
    assert_counts_consistent(report)


def test_read_error_counted_as_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same rule as above, simulated, so it is covered when tests run as root."""
    write(tmp_path, "locked.py")
    write(tmp_path, "open.py")
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if os.path.basename(path) == "locked.py":
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(walker_module.os, "open", failing_open)
    files, skipped, _ = walk(tmp_path)
    assert set(files) == {"open.py"}
    assert skipped == {"locked.py": "unreadable"}


def test_unlistable_directory_counts_nothing_and_does_not_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "private/a.py")
    write(tmp_path, "main.py")
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(path) == "private":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(walker_module.os, "scandir", scandir)
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"main.py"}
    assert report["seen"] == 1
    assert skipped == {}


class _Listing:
    """A scandir result whose entries were taken before some files were deleted."""

    def __init__(self, entries: list[os.DirEntry]) -> None:
        self.entries = entries

    def __enter__(self) -> list[os.DirEntry]:
        return self.entries

    def __exit__(self, *exc: object) -> None:
        return None


def test_vanished_file_counted_not_crashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "gone.py")
    write(tmp_path, "stays.py")
    real_scandir = os.scandir

    def scandir_then_delete(path):
        with real_scandir(path) as it:
            entries = list(it)
        (tmp_path / "gone.py").unlink(missing_ok=True)
        return _Listing(entries)

    monkeypatch.setattr(walker_module.os, "scandir", scandir_then_delete)
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"stays.py"}
    assert skipped == {"gone.py": "vanished"}
    assert_counts_consistent(report)


def test_vanished_between_stat_and_open_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "gone.py")
    real_open = os.open

    def open_after_delete(path, *args, **kwargs):
        os.unlink(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(walker_module.os, "open", open_after_delete)
    _, skipped, _ = walk(tmp_path)
    assert skipped == {"gone.py": "vanished"}


def test_fifo_is_never_opened_or_counted(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(tmp_path / "pipe.py")
    write(tmp_path, "main.py")
    files, skipped, report = walk(tmp_path)
    assert set(files) == {"main.py"}
    assert report["seen"] == 1
    assert skipped == {}


def test_run_does_not_mutate_inputs_and_is_deterministic(tmp_path: Path) -> None:
    for i in range(20):
        write(tmp_path, f"d{i % 3}/m{i}.py")
    ignore = ["d2/"]
    walker = RepositoryWalker(ignore=ignore)
    first = walker.run(root=str(tmp_path))
    second = walker.run(root=str(tmp_path))
    assert ignore == ["d2/"]
    assert [s.meta for s in first["files"]] == [s.meta for s in second["files"]]
    assert first["report"] == second["report"]


def test_to_dict_round_trip() -> None:
    walker = RepositoryWalker(max_file_bytes=1234, ignore=["a/", "*.tmp"], text_extensions=[".txt"])
    data = component_to_dict(walker, "walker")
    assert data == {
        "type": "codeground.components.walker.RepositoryWalker",
        "init_parameters": {
            "max_file_bytes": 1234,
            "ignore": ["a/", "*.tmp"],
            "text_extensions": [".txt"],
            "max_notebook_bytes": 20_000_000,
        },
    }
    restored = component_from_dict(RepositoryWalker, data, "walker")
    assert isinstance(restored, RepositoryWalker)
    assert component_to_dict(restored, "walker") == data
    defaults = component_to_dict(RepositoryWalker(), "walker")["init_parameters"]
    assert defaults == {
        "max_file_bytes": 1_000_000,
        "ignore": None,
        "text_extensions": None,
        "max_notebook_bytes": 20_000_000,
    }


def test_component_runs_in_a_pipeline(tmp_path: Path) -> None:
    from haystack import Pipeline

    write(tmp_path, "main.py")
    pipe = Pipeline()
    pipe.add_component("walker", RepositoryWalker())
    out = pipe.run({"walker": {"root": str(tmp_path)}})
    assert [s.meta["file_path"] for s in out["walker"]["files"]] == ["main.py"]


def test_notebooks_have_their_own_size_cap_because_outputs_are_dropped(tmp_path):
    big_outputs = '{"cells": [], "metadata": {}, "nbformat": 4, "x": "' + "o" * 3000 + '"}'
    (tmp_path / "nb.ipynb").write_text(big_outputs)
    (tmp_path / "big.py").write_text("x = 1\n" * 600)
    walker = RepositoryWalker(max_file_bytes=2000, max_notebook_bytes=10_000)
    report = walker.run(root=str(tmp_path))["report"]
    assert dict(map(tuple, report["skipped_files"])) == {"big.py": "too_large"}
    assert report["indexed"] == 1
