"""The Dask recipe, on a local cluster: its findings equal the CLI's."""

from __future__ import annotations

import gzip
import sys

import orjson
import pytest

from conftest import FIXTURES, ROOT
from helpers import run_cli

distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402

from ctxlint.on_dask import lint_with_dask  # noqa: E402
from ctxlint.report.json_format import finding_dict  # noqa: E402


@pytest.mark.filterwarnings("ignore:Couldn.t detect a suitable IP address")  # dask probing for its own address
def test_findings_on_a_local_cluster_equal_the_cli(tmp_path):
    keyed = tmp_path / "generated.jsonl"
    generate(1024 * 1024, keyed, seed=5, concurrent=30)
    rotated = tmp_path / "rotated.jsonl"  # keyed and keyless sessions going on across a rotation, the older file gzipped
    generate(256 * 1024, rotated, seed=6, concurrent=10)
    lines = rotated.read_bytes().splitlines(keepends=True)
    (tmp_path / "rotated.jsonl.1.gz").write_bytes(gzip.compress(b"".join(lines[:len(lines) // 2])))
    rotated.write_bytes(b"".join(lines[len(lines) // 2:]))
    logs = [str(keyed), str(FIXTURES / "demo" / "broken-agent.jsonl"), str(FIXTURES / "rules" / "CTX016" / "fail_text_reply_lost.jsonl"),
            str(rotated), str(tmp_path / "rotated.jsonl.1.gz")]
    cli = orjson.loads(run_cli("check", "--format", "json", *logs).stdout)["findings"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, distributed.Client(cluster):
        found = [finding_dict(f) for f in lint_with_dask(logs)]
    assert found == cli and len(found) > 5
