"""What went wrong with a request, one base per kind of answer (pure).

Every servicer maps these bases, and only these, to a status code (acm.runtime.status_of): a plain
ValueError, KeyError or TypeError is a bug of ours and answers INTERNAL, never INVALID_ARGUMENT.
Code that checks a caller's input raises a subclass of InvalidRequest whose message names the field."""

from __future__ import annotations


class InvalidRequest(ValueError):
    """The caller's input is wrong (missing, malformed or out of range); the message says what to change.

    A ValueError too, so input checks written as ``except ValueError`` (the CLI's argument parsing) still
    catch it; the mapping tells the two apart by this type, never by the message."""


class NotFound(LookupError):
    """What the request names does not exist for this caller."""


class Rejected(Exception):
    """A well-formed request that cannot be carried out in the current state (a concurrent write, an
    unusable draft): the state stays as it was."""


class TooLarge(Exception):
    """The answer the request asks for does not fit the limit it set (its token budget)."""


class Unauthenticated(Exception):
    """No credential, or one that is malformed, unknown or revoked."""


class PermissionDenied(Exception):
    """The caller is known but may not do this here; the message says what to do instead."""


class Unavailable(Exception):
    """Something this request needs (the event bus, another service) is not answering; a retry may work."""


class InternalFault(Exception):
    """Another service failed on this request with an internal error; the message carries the error id it
    logged, so the caller's report leads to that service's log line."""
