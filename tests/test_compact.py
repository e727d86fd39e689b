"""The compact map CTX023 keeps log-wide state in: a dict's answers, at 16 bytes an entry."""

import pickle
import random

import pytest

from ctxlint import compact
from ctxlint.compact import CompactIntMap


@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 40, 200])
def test_the_map_answers_as_a_dict_does_across_packed_runs(monkeypatch, count):
    monkeypatch.setattr(compact, "RUN", 4)  # many runs, merged at every size
    rng = random.Random(count)
    expected: dict[int, int] = {}
    packed = CompactIntMap()
    for _ in range(count):
        key, value = rng.randrange(-(1 << 63), 1 << 63), rng.randrange(1 << 62)
        if rng.random() < 0.3 and expected:
            key = rng.choice(list(expected))  # set again: the first value stays
        expected.setdefault(key, value)
        packed.setdefault(key, value)
    absent = [key for key in (rng.randrange(1 << 40) for _ in range(50)) if key not in expected]
    for answering in (packed, pickle.loads(pickle.dumps(packed))):
        assert all(answering.get(key) == value and key in answering for key, value in expected.items())
        assert all(answering.get(key) is None and key not in answering for key in absent)
    assert sum(len(keys) for keys, _ in packed._runs) + len(packed._recent) == len(expected)  # no key kept twice


def test_runs_stay_few_and_sorted(monkeypatch):
    monkeypatch.setattr(compact, "RUN", 4)
    packed = CompactIntMap()
    for key in range(1000, 0, -1):
        packed.setdefault(key * 7919 % 100003, key)
    runs = packed._runs
    assert len(runs) <= 8  # log2(1000 / 4)
    assert all(list(keys) == sorted(keys) for keys, _ in runs)
    assert [len(keys) for keys, _ in runs] == sorted((len(keys) for keys, _ in runs), reverse=True)
