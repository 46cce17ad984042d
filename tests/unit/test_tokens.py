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
