"""Errors the gateway's use cases raise; the gRPC layer maps each to its status code."""


class Unauthenticated(Exception):
    pass


class PermissionDenied(Exception):
    pass


class NotFound(Exception):
    pass


class Unavailable(Exception):
    pass
