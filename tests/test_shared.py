"""shared: per-process tables, kept for at most KEYS_KEPT keys of each kind."""

from exprsearch import shared


def test_tables_are_kept_per_key_and_the_oldest_keys_let_go():
    shared.clear()
    first = shared.tables("terms", "a", 2)
    first[0]["x"] = 1
    assert shared.tables("terms", "a", 2) is first  # the same dicts for the same key
    other = shared.tables("shapes", "a", 1)
    for key in range(shared.KEYS_KEPT):  # fills the kind: "a" is the oldest and goes
        shared.tables("terms", key, 2)
    assert shared.tables("terms", "a", 2) is not first and shared.tables("terms", "a", 2)[0] == {}
    assert shared.tables("shapes", "a", 1) is other  # another kind keeps its own keys
    assert sum(kind == "terms" for kind, _ in shared._TABLES) == shared.KEYS_KEPT
    shared.clear()
