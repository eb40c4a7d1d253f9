"""Chunkers: one component per corpus type, all producing records of the shape in ``components.records``."""
