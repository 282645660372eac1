"""The partition assignors the bundled engine's consumer groups choose from."""

from __future__ import annotations

import itertools
import random

import pytest

from pk.engine import assignors


def test_range_matches_kafkas_contiguous_runs():
    members = {"m1": ["t"], "m2": ["t"], "m3": ["t"]}
    assert assignors.range_assign(members, {"t": 7}) == {
        "m1": {"t": [0, 1, 2]}, "m2": {"t": [3, 4]}, "m3": {"t": [5, 6]}}
    # per topic, members sorted by id; the first n % c get one more
    members = {"b": ["x", "y"], "a": ["x"]}
    assert assignors.range_assign(members, {"x": 3, "y": 2}) == {"a": {"x": [0, 1]}, "b": {"x": [2], "y": [0, 1]}}


def test_roundrobin_deals_partitions_in_order():
    members = {"m1": ["t", "u"], "m2": ["t", "u"]}
    assert assignors.roundrobin_assign(members, {"t": 3, "u": 2}) == {
        "m1": {"t": [0, 2], "u": [1]}, "m2": {"t": [1], "u": [0]}}
    # a member not subscribed to a topic is skipped
    members = {"m1": ["t"], "m2": ["u"]}
    assert assignors.roundrobin_assign(members, {"t": 2, "u": 2}) == {"m1": {"t": [0, 1]}, "m2": {"u": [0, 1]}}


@pytest.mark.parametrize("name", ["range", "roundrobin", "cooperative-sticky"])
@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_partition_goes_to_exactly_one_member(name, count):
    members = {f"m{i}": ["t"] for i in range(count)}
    result = assignors.ASSIGNORS[name](members, {"t": 5})
    owned = sorted(p for parts in result.values() for p in parts.get("t", []))
    assert owned == [0, 1, 2, 3, 4]
    sizes = [len(parts.get("t", [])) for parts in result.values()]
    assert max(sizes) - min(sizes) <= 1


def test_sticky_keeps_partitions_where_it_can():
    members = {"a": ["t"], "b": ["t"]}
    first = assignors.sticky_assign(members, {"t": 6})
    # a third member joins: only two partitions move, both to the newcomer
    members3 = {"a": ["t"], "b": ["t"], "c": ["t"]}
    second = assignors.sticky_assign(members3, {"t": 6}, first)
    moved = sum(1 for m in ("a", "b") for p in first[m]["t"] if p not in second[m].get("t", []))
    assert moved == 2 and len(second["c"]["t"]) == 2
    # b leaves: a keeps everything it had
    third = assignors.sticky_assign({"a": ["t"], "c": ["t"]}, {"t": 6}, second)
    assert set(second["a"]["t"]) <= set(third["a"]["t"])


def test_sticky_is_balanced_on_random_histories():
    rng = random.Random(3)
    previous = {}
    for _ in range(30):
        members = {f"m{i}": ["t", "u"] for i in rng.sample(range(6), rng.randrange(1, 6))}
        result = assignors.sticky_assign(members, {"t": 5, "u": 4}, previous)
        owned = sorted((t, p) for parts in result.values() for t, ps in parts.items() for p in ps)
        assert owned == sorted(itertools.chain((("t", p) for p in range(5)), (("u", p) for p in range(4))))
        sizes = [sum(len(ps) for ps in parts.values()) for parts in result.values()]
        assert max(sizes) - min(sizes) <= 1
        previous = result


def test_strategy_names_and_protocol_selection():
    assert assignors.strategy_names("org.apache.kafka.clients.consumer.RangeAssignor,"
                                    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor") == [
        "range", "cooperative-sticky"]
    assert assignors.strategy_names("roundrobin") == ["roundrobin"]
    with pytest.raises(ValueError, match="Class nope cannot be found"):
        assignors.strategy_names("nope")
    assert assignors.select_protocol([["range", "roundrobin"], ["roundrobin", "range"], ["roundrobin"]]) == "roundrobin"
    assert assignors.select_protocol([["range"], ["roundrobin"]]) is None
