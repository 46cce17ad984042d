"""Pure domain model: no IO library is imported anywhere under this package."""
