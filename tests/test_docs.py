"""Rule docs come from the rule docstrings; the pages in rules/ must match them."""

from __future__ import annotations

import pytest

from conftest import ROOT
from ctxlint.docs import expected_pages
from ctxlint.rules import RULES
from ctxlint.rules.base import SECTIONS, docs_sections


@pytest.mark.parametrize("code", list(RULES))
def test_docstring_has_three_sections(code):
    sections = docs_sections(RULES[code])
    assert list(sections)[:3] == list(SECTIONS)
    assert all(sections[s].strip() for s in SECTIONS)
    assert RULES[code].remediation.strip()


@pytest.mark.parametrize("name", sorted(expected_pages()))
def test_rules_page_is_current(name):
    page = ROOT / "rules" / name
    assert page.is_file(), f"rules/{name} is missing: run `python -m ctxlint.docs`"
    assert page.read_text(encoding="utf-8") == expected_pages()[name], f"rules/{name} is stale: run `python -m ctxlint.docs`"


def test_no_stray_pages():
    assert sorted(p.name for p in (ROOT / "rules").glob("*.md")) == sorted(expected_pages())


def test_codes_and_names_are_unique():
    assert len({r.name for r in RULES.values()}) == len(RULES)
    assert all(code == rule.code for code, rule in RULES.items())
