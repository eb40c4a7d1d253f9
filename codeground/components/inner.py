"""Build a stock component from its serialized form inside one of ours.

Some of our components guard a stock one (a ranker, a chat generator) so that its failure becomes
a visible notice instead of a crashed pipeline. The stock component stays declared in YAML in its
own serialized form (``type`` + ``init_parameters``) and is deserialized here with Haystack's own
machinery. ``codeground.components`` is added to Haystack's process-wide deserialization allowlist
here (its public ``allow_deserialization_module``): the pipeline loader and these wrappers accept our
own components and Haystack's, nothing else.
"""

from __future__ import annotations

from typing import Any

ALLOWED_MODULES = ["codeground.components.*"]


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

    def __init__(self, spec: Any, name: str) -> None:
        self.spec = spec
        self.name = name
        self.instance: Any = None
        self.error: BaseException | None = None

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
