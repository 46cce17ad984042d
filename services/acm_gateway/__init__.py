"""Gateway: the one public entry point. Authenticates (API key → client), enforces scope, routes."""
