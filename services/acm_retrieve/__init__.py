"""Retrieve: scoped hybrid retrieval (keyword + vector, fused), packed into a token budget.

It owns the vector index: the memories topic carries each memory's embedding, and retrieve's
handler writes it to the vector store, so one writer per index in every mode."""

GROUP = "retrieve"
