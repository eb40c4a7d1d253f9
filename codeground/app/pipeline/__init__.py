"""The pipeline YAMLs: read, resolved and built (``loader``), overlays on a base (``overlay``), which
component plays which part (``roles``) and a YAML as its resolved text and Mermaid graph
(``pipeline_view``)."""
