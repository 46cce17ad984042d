"""Verified compaction of a session's working memory (pure logic, no IO).

- ``noise``: protocol noise out of a turn (HTTP codes, raw JSON → key=value, debug fields, whitespace);
- ``atoms``: the key-fact atoms of a text (ids, amounts, quantities, dates, names, statuses, goals);
- ``pinned``: the pinned entity state, updated (never rewritten) by newer facts;
- ``summary``: the deterministic episodic summary (condition → tool + key inputs → effect);
- ``verify``: every atom of the replaced span is kept, none is invented;
- ``engine``: the compaction loop with back-off and the context assembly.
"""
