from exprsearch import shared
from exprsearch.memo import Memo


def _memo(told: list) -> Memo:
    return Memo("grammar", lambda key, expansions, made: told.append((key, made)))


def test_only_expansions_free_of_the_data_are_kept_and_taken_with_what_they_made():
    shared.clear()
    told: list = []
    first = _memo(told)
    first.start(("term", 2))
    first.start(("shape", 1))  # made while making term: taken with it
    first.finish(("shape", 1), ["x"], 3, False)
    first.finish(("term", 2), ["x", "y"], 2, False)
    first.start(("chosen", 2))
    first.finish(("chosen", 2), ["z"], 1, True)  # the data chose
    first.start(("user", 3))
    assert first.get(("chosen", 2)) == ["z"]  # uses what the data chose: not kept either
    first.finish(("user", 3), ["z"], 1, False)
    first.start(("self", 3))
    assert first.get(("self", 3)) == []  # a re-entry sees the guard: not kept
    first.finish(("self", 3), ["s"], 1, False)

    told.clear()
    second = _memo(told)
    assert second.get(("term", 2)) == ["x", "y"]
    assert told == [(("term", 2), 2), (("shape", 1), 3)]  # counted as if made here, once each
    assert second.get(("shape", 1)) == ["x"] and len(told) == 2
    assert second.get(("chosen", 2)) is None and second.get(("user", 3)) is None
    assert second.get(("self", 3)) is None


def test_grammars_keep_their_own_expansions():
    shared.clear()
    first = Memo("one", lambda *a: None)
    first.start(("r", 1))
    first.finish(("r", 1), ["a"], 1, False)
    assert Memo("two", lambda *a: None).get(("r", 1)) is None
    assert Memo("one", lambda *a: None).get(("r", 1)) == ["a"]
