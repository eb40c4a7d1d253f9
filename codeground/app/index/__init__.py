"""The index on disk: where it lives and how a generation replaces the last (``index_dir``), what a
generation records (``manifest``), the index run and its two stages (``indexing``, ``index_stages``),
the stores' record counts (``store_counts``), the embedder's probe (``embedder_probe``), the re-vote's
background fill (``revote_fill``) and a full disk's hint (``disk_space``)."""
