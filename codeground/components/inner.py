"""Build a stock component from its serialized form inside one of ours.

Some of our components guard a stock one (a ranker, a chat generator) so that its failure becomes
a visible notice instead of a crashed pipeline. The stock component stays declared in YAML in its
own serialized form (``type`` + ``init_parameters``) and is deserialized here with Haystack's own
machinery. ``codeground.components`` is added to Haystack's process-wide deserialization allowlist
here (its public ``allow_deserialization_module``): the pipeline loader and these wrappers accept our
own components and Haystack's, nothing else.

Every component module is imported by ``import_apart`` first, in a thread of its own, whether a
pipeline names it (``app.pipeline.loader.build_pipeline``) or one of ours builds it inside (``build_inner``).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterable
from typing import Any

ALLOWED_MODULES = ["codeground.components.*"]
# What a YAML may name (the loader's allowlist, ``ALLOWED_MODULES``, and Haystack's own packages).
NAMEABLE_PACKAGES = (*(m.removesuffix(".*") for m in ALLOWED_MODULES), "haystack", "haystack_integrations")


def import_apart(modules: Iterable[str]) -> None:
    """Import those of ``modules`` not imported yet, in a thread of their own.

    Haystack keeps the exception of a failed optional import (``LazyImport``: importing
    ``ChatPromptBuilder`` records that ``arrow`` is missing), and with its traceback every frame that
    led to the import, for as long as the process runs. Imported while a ``QueryEngine`` built its
    pipeline, that engine, its models and its lease on an index generation were never freed: a chat,
    MCP or HTTP server kept a replaced generation on disk until it stopped. Imported here, the frames
    kept are this thread's. Only modules of ``NAMEABLE_PACKAGES`` (inside Haystack's allowlist) are
    imported; one that fails is left to the build, which says what is wrong."""
    nameable = tuple(p + "." for p in NAMEABLE_PACKAGES)
    wanted = sorted({m for m in modules if m not in sys.modules and (m + ".").startswith(nameable)})

    def run() -> None:
        for module in wanted:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001, S112 - the build reports it, naming the component
                continue

    if wanted:
        thread = threading.Thread(target=run, name="codeground-import-apart", daemon=True)
        thread.start()
        thread.join()


def build_inner(spec: Any, name: str) -> Any:
    """The component ``spec`` describes: an instance as is (Haystack's loader already built nested
    components from YAML), or a serialized dict (``{"type": ..., "init_parameters": ...}``) built here.
    """
    if not isinstance(spec, dict):
        return spec
    from haystack.core.serialization import (
        allow_deserialization_module,
        component_from_dict,
        import_class_by_name,
    )

    for pattern in ALLOWED_MODULES:
        allow_deserialization_module(pattern)
    import_apart([str(spec["type"]).rpartition(".")[0]])
    cls = import_class_by_name(spec["type"])
    return component_from_dict(cls, spec, name)


def init_parameters(spec: Any) -> dict[str, Any]:
    """The init parameters of a component given as an instance or in serialized form."""
    if not isinstance(spec, dict):
        spec = spec.to_dict() if hasattr(spec, "to_dict") else {}
    return spec.get("init_parameters") or {}


def one_line(exc: BaseException) -> str:
    """An exception as one short line: ``Type: first line of the message``."""
    text = " ".join(str(exc).split())
    return f"{exc.__class__.__name__}: {text[:200]}" if text else exc.__class__.__name__


class LazyComponent:
    """A stock component built and warmed up on first use; a failure is remembered, not raised early.

    Used by the guarding components: pipeline ``warm_up`` must not fail because an optional piece
    (a reranker model, an LLM client without credentials) cannot be built; the failure is reported
    by the component at run time as a notice.
    """

    def __init__(self, spec: Any, name: str, *, one_at_a_time: bool = False) -> None:
        """``one_at_a_time``: ``run`` calls wait for the previous one to end (a model in this process,
        such as llama.cpp's, is one native object: two generations at once corrupt its memory)."""
        self.spec = spec
        self.name = name
        self.one_at_a_time = one_at_a_time
        self.instance: Any = None
        self.error: BaseException | None = None
        self._turn = threading.Lock()

    def warm_up(self) -> bool:
        """Build once; True when the component is usable."""
        if self.instance is None and self.error is None:
            try:
                instance = build_inner(self.spec, self.name)
                if hasattr(instance, "warm_up"):
                    instance.warm_up()
                self.instance = instance
            except Exception as exc:  # noqa: BLE001 - kept and reported by the caller
                self.error = exc
        return self.instance is not None

    def get(self) -> Any:
        """The component, or the exception that prevented building it."""
        if not self.warm_up():
            raise self.error  # type: ignore[misc]
        return self.instance

    def run(self, **kwargs: Any) -> dict[str, Any]:
        """The component's ``run(**kwargs)``, one call at a time when so built (and its build too)."""
        if not self.one_at_a_time:
            return self.get().run(**kwargs)
        with self._turn:
            return self.get().run(**kwargs)
