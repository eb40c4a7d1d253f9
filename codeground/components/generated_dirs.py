"""Folders that hold generated or vendored code, per ecosystem: the walker prunes them (and counts them).

Rule: a folder of one of these names, at any depth, is not walked; ``report["pruned"]`` counts it,
since a user may wonder where their ``vendor/`` went. Each name is one an ecosystem's tools write
or fill with other people's code: JS ``node_modules`` ``bower_components`` ``dist``; Python/C/Java
``build``; Rust and Maven ``target``; Go, PHP (Composer) and Ruby ``vendor``; Ruby bundler
``.bundle``; Gradle ``.gradle``; CocoaPods ``Pods`` and Carthage ``Carthage``; SwiftPM ``.build``;
Elixir (Mix) ``_build`` ``deps``; Zig ``zig-cache`` ``.zig-cache`` ``zig-out``; Haskell Stack
``.stack-work`` and Cabal ``dist-newstyle``; .NET ``obj``.

Not pruned, by decision: ``bin/``. .NET writes its builds there, but Ruby (``bin/rails``,
``bin/setup``), shell and many other repositories keep their own scripts in it, and a .NET ``bin/``
holds assemblies the walker skips anyway (binary or of no indexed type); pruning it would drop
source. ``lib/`` and ``packages/`` are source folders in most ecosystems and stay too.

Usage:
```python
from codeground.components.generated_dirs import GENERATED_DIR_NAMES

assert {"vendor", "Pods", "_build", "deps", ".zig-cache", "obj"} <= GENERATED_DIR_NAMES
assert "bin" not in GENERATED_DIR_NAMES
```
"""

from __future__ import annotations

GENERATED_DIR_NAMES: frozenset[str] = frozenset(
    """
    node_modules bower_components dist build vendor target .bundle .gradle Pods Carthage .build
    _build deps zig-cache .zig-cache zig-out .stack-work dist-newstyle obj
    """.split()
)
