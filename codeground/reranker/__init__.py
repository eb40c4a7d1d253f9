"""codeground's own cross-encoder: mined from source trees on this machine, trained and exported here."""
