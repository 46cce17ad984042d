"""Anticipate: watches what ingest writes and keeps each session's hot state and prefetch pool warm.

On every write into a session it predicts the session's next Fetch (latest turns, entities and their
graph neighbours, related categories, co-access learned per agent, open tasks) and stores the predicted
memories as the session's pool within the schema's budget; the gateway's PrefetchingRetriever serves
Fetch from it (acm.read.prefetching). A Forget drops the scope's hot state and pools."""

GROUP = "anticipate"
