"""Questions over an index: the query engine (``engine``), the repair of an answer naming what the
repository lacks (``repair``), the concept prompt (``concept_prompt``) and the engines a server keeps
(``engine_pool``)."""
