"""Ports: the interfaces (typing.Protocol) that adapters implement and services depend on."""
