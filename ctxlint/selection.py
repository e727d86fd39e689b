"""Which rules run: selectors are codes (CTX001), names (orphan-tool-result), code prefixes
(CTX0) or ALL. When selectors disagree, the most specific one wins; on a tie, ignore wins."""

from __future__ import annotations

from ctxlint.rules import RULES


class UnknownSelector(ValueError):
    pass


def _specificity(selector: str, code: str, name: str) -> int | None:
    upper = selector.upper()
    if upper == "ALL":
        return 0
    if upper == code or selector.lower() == name:
        return 100
    if code.startswith(upper) and upper.startswith("CTX"):
        return len(upper)
    return None


def validate(selectors: list[str], where: str = "") -> None:
    for selector in selectors:
        if not any(_specificity(selector, code, rule.name) is not None for code, rule in RULES.items()):
            raise UnknownSelector(f"unknown rule selector {selector!r}{where}: use a code (CTX001), a name (orphan-tool-result), a code prefix (CTX0) or ALL")


def default_codes() -> list[str]:
    """What runs without a selection: every rule but the opt-in ones."""
    return [code for code, rule in RULES.items() if not rule.opt_in]


def selected_codes(select: list[str] | None, ignore: list[str] | None, extend_select: list[str] | None = None) -> list[str]:
    """The codes to run. Without `select`, every rule but the opt-in ones (Rule.opt_in),
    plus what `extend_select` names; ALL, a prefix, a code or a name selects those too."""
    by_default = not select
    select = (list(select) if select else []) + list(extend_select or [])
    ignore = list(ignore or [])
    validate(select + ignore)
    chosen = []
    for code, rule in RULES.items():
        scores = [s for s in (_specificity(x, code, rule.name) for x in select) if s is not None]
        if by_default and not rule.opt_in:
            scores.append(_specificity("ALL", code, rule.name))  # the default selection
        best_select = max(scores, default=None)
        best_ignore = max((s for s in (_specificity(x, code, rule.name) for x in ignore) if s is not None), default=None)
        if best_select is not None and (best_ignore is None or best_select > best_ignore):
            chosen.append(code)
    return chosen


def resolve_per_code(settings: dict[str, str], where: str = "") -> dict[str, str]:
    """{selector: value} -> {code: value}; for each rule the most specific selector's value."""
    validate(list(settings), where)
    resolved = {}
    for code, rule in RULES.items():
        ranked = [(s, value) for selector, value in settings.items() if (s := _specificity(selector, code, rule.name)) is not None]
        if ranked:
            resolved[code] = max(ranked, key=lambda pair: pair[0])[1]
    return resolved
