"""Every fixture log, mutated: one value swapped for a value of another type, a member or
element dropped, an element doubled, two lines swapped, a line cut short, in every format
ctxlint reads (JSONL of every API, cassettes, JSON documents). No mutation may crash a run
or a renderer: what cannot be read is a located problem, and the run goes on. Seeded, so
a failure names the case that shows it (each crash found this way is fixed and kept)."""

from __future__ import annotations

import copy
import io
import json
import random

import pytest
import yaml

from conftest import FIXTURES
from ctxlint.api import CheckOptions, run_check
from ctxlint.report.json_format import write_json
from ctxlint.report.junit import render_junit
from ctxlint.report.lines import render_concise, render_github, render_jsonl
from ctxlint.report.markdown import render_markdown
from ctxlint.report.sarif import render_sarif
from ctxlint.report.text import render_text

VALUES = [None, 0, -1, 1.5, 2**64 - 1, "", "x", "user", "assistant", "tool", [], {}, [None], {"a": 1}, True,
          {"type": "text", "text": "hi"}, [{"type": "text"}], "<think>x</think>", "call_1",
          [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]]
LOGS = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".yaml", ".yml", ".json", ".har") and p.is_file())
MUTATIONS_PER_LOG = 3


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, path + (index,))


def _mutate(value, rng: random.Random):
    """One node of a JSON value changed: replaced, dropped or doubled; bodies a cassette
    stores as JSON text are mutated inside."""
    path = rng.choice(list(_paths(value))[1:] or [()])
    if not path:
        return copy.deepcopy(rng.choice(VALUES))
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    node, roll = parent[path[-1]], rng.random()
    if isinstance(node, str) and node.lstrip()[:1] in ("{", "["):
        try:
            parent[path[-1]] = json.dumps(_mutate(json.loads(node), rng))
            return value
        except ValueError:
            pass
    if roll < 0.15:
        del parent[path[-1]]
    elif roll < 0.25 and isinstance(parent, list):
        parent.insert(path[-1], copy.deepcopy(node))
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return value


def _mutated_copy(log, rng: random.Random, tmp_path):
    text = log.read_text(encoding="utf-8")
    target = tmp_path / log.name
    if log.suffix == ".yaml":
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:  # a case of a cassette the safe loader refuses: checked as it is
            target.write_text(text, encoding="utf-8")
            return target
        target.write_text(yaml.safe_dump(_mutate(data, rng), allow_unicode=True), encoding="utf-8")
    elif log.suffix == ".json":
        target.write_text(json.dumps(_mutate(json.loads(text), rng)), encoding="utf-8")
    else:
        lines = text.splitlines()
        index = rng.randrange(len(lines))
        roll = rng.random()
        if roll < 0.1 and len(lines) > 1:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        elif roll < 0.2:
            lines[index] = lines[index][: rng.randrange(len(lines[index]) + 1)]
        else:
            try:
                lines[index] = json.dumps(_mutate(json.loads(lines[index]), rng), ensure_ascii=False)
            except ValueError:
                lines[index] = lines[index][::-1]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_mutated_log_never_crashes_a_run_or_a_renderer(tmp_path, log):
    rng = random.Random(str(log.relative_to(FIXTURES)))
    for _ in range(MUTATIONS_PER_LOG):
        mutated = _mutated_copy(log, rng, tmp_path)
        report = run_check([str(mutated)], CheckOptions(redact=rng.random() < 0.3))
        assert report.io_errors == [] and report.files == 1
        out = io.StringIO()
        write_json(report, out)
        for render in (render_concise, render_github, render_jsonl, render_markdown, render_sarif):
            render(report)
        render_junit(report, "error")
        render_text(report, out, color=False, verbose=True)
