"""Adapters: the real and embedded implementations of the ports."""
