"""Every rule case under fixtures/rules/: exactly the expected (code, line) findings, nothing else."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import code_lines, expected_of, json_report

CASES = sorted((FIXTURES / "rules").glob("*/*.jsonl"))


def test_every_rule_has_failing_and_passing_cases():
    from ctxlint.rules import RULES

    for code in RULES:
        names = [c.stem for c in CASES if c.parent.name == code]
        assert any(n.startswith("fail_") for n in names), f"{code} has no failing case"
        assert any(n.startswith("pass_") for n in names), f"{code} has no passing case"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_case(case):
    report = json_report(str(case))
    assert code_lines(report) == expected_of(case)
    if case.stem.startswith("fail_"):
        assert any(code == case.parent.name for code, _ in expected_of(case))
