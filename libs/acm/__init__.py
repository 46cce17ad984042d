"""ACM shared library: domain model, store and bus ports, adapters, wiring."""
