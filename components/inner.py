"""Build a stock component from its serialized form inside one of ours.

Some of our components guard a stock one (a ranker, a chat generator) so that its failure becomes
a visible notice instead of a crashed pipeline. The stock component stays declared in YAML in its
own serialized form (``type`` + ``init_parameters``) and is deserialized here with Haystack's own
machinery and the same module allowlist the pipeline loader uses.
"""

from __future__ import annotations

from typing import Any

ALLOWED_MODULES = ["components.*"]


def build_inner(spec: Any, name: str) -> Any:
    """The component ``spec`` describes: an instance as is (Haystack's loader already built nested
    components from YAML), or a serialized dict (``{"type": ..., "init_parameters": ...}``) built here.
    """
    if not isinstance(spec, dict):
        return spec
    from haystack.core.serialization import component_from_dict, import_class_by_name
    from haystack.core.serialization_security import _deserialization_context

    with _deserialization_context(allowed_modules=ALLOWED_MODULES):
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
