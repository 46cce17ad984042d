from acm.adapters.tokenizer import TiktokenCounter, encoding


def test_counts_offline_with_both_encodings() -> None:
    counter = TiktokenCounter()
    assert counter.count("hello world") == 2
    assert counter.count("hello world", "o200k_base") == 2
    # Known token ids prove the right vocabulary was loaded, not just some vocabulary.
    assert encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert encoding("o200k_base").encode("hello world") == [24912, 2375]


def test_special_tokens_in_user_text_are_counted_not_rejected() -> None:
    assert TiktokenCounter().count("<|endoftext|>") > 1


def test_remembered_counts_stay_within_their_character_budget() -> None:
    counter = TiktokenCounter(memo_chars=100, memo_max_chars=50)
    texts = [f"line {i}: the order PO-{i:04d} shipped." for i in range(40)]
    first = [counter.count(t) for t in texts]
    assert [counter.count(t) for t in texts] == first
    remembered = [text for generation in (counter._new, counter._old) for _enc, text in generation]
    # Each generation holds half the budget, and goes over it by at most the one text that filled it.
    assert sum(map(len, remembered)) <= 100 + 50 and len(remembered) < len(texts)
    assert counter.count("x" * 60) == counter.count("x" * 60)  # longer than memo_max_chars: counted, not kept
    assert all(len(text) <= 50 for text in remembered)
