"""Ranking the files behind the records: the order a code search's reader sees (issue 56)."""
