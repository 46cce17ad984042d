"""Errors the gateway's use cases raise: the domain's (acm.domain.errors), which every servicer maps to
its status code with acm.runtime.status_of."""

from acm.domain.errors import NotFound, PermissionDenied, Unauthenticated, Unavailable

__all__ = ["NotFound", "PermissionDenied", "Unauthenticated", "Unavailable"]
