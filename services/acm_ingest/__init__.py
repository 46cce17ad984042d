"""Ingest: turns → memories (with embeddings), entities and relations; one handler per topic."""

GROUP = "ingest"
