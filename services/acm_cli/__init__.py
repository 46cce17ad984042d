"""The `acm` command: run embedded ACM, manage keys, ingest and fetch from a terminal."""
