"""Fixtures that run real ``weft kronos`` servers for the client tests.

The binary is ``$WEFT_BIN`` when set, else built once per session with
``go build -o <tmp>/weft ./cmd/weft`` in the repository root (the parent of
``clients/python``). Every server is a subprocess on a free loopback port with
its own data directory; it is killed at teardown whatever the test's outcome,
and each node's log is printed when a test that used it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import (
    BUILD_TIMEOUT,
    LOG_TAIL,
    REPO_ROOT,
    Cluster,
    Node,
    running_nodes,
    wait_for_leader,
)

from weft import KronosClient


def _print_logs_if_failed(request: pytest.FixtureRequest, nodes: list[Node]) -> None:
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for node in nodes:
            print(f"--- node {node.node_id} ({node.addr}) log tail ---\n{node.log_tail()}")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the item, for the log-printing fixtures."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def weft_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``weft`` binary: ``$WEFT_BIN``, or built from the repository."""
    env = os.environ.get("WEFT_BIN")
    if env:
        path = Path(env)
        if not (path.is_file() and os.access(path, os.X_OK)):
            pytest.fail(f"WEFT_BIN={env} is not an executable file", pytrace=False)
        return path
    go = shutil.which("go")
    if go is None:
        pytest.fail("go not found on PATH; install Go or set WEFT_BIN", pytrace=False)
    out = tmp_path_factory.mktemp("bin") / "weft"
    build = subprocess.run([go, "build", "-o", str(out), "./cmd/weft"], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    if build.returncode != 0:
        pytest.fail(f"go build ./cmd/weft failed in {REPO_ROOT}:\n{build.stderr[-LOG_TAIL:]}",
                    pytrace=False)
    return out


@pytest.fixture(scope="module")
def kronos_addr(weft_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One single-replica server shared by a test module."""
    with running_nodes(weft_bin, tmp_path_factory.mktemp("kronos"), 1) as nodes:
        yield nodes[0].addr


@pytest.fixture
def fresh_kronos_addr(weft_bin: Path, tmp_path: Path,
                      request: pytest.FixtureRequest) -> Iterator[str]:
    """A single-replica server of the test's own (for state that is global, like clocks)."""
    with running_nodes(weft_bin, tmp_path, 1) as nodes:
        yield nodes[0].addr
        _print_logs_if_failed(request, nodes)


@pytest.fixture
def kronos_cluster(weft_bin: Path, tmp_path: Path,
                   request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """Three replicas with an elected leader, of the test's own."""
    with running_nodes(weft_bin, tmp_path, 3) as nodes:
        cluster = Cluster(nodes)
        wait_for_leader(cluster)
        yield cluster
        _print_logs_if_failed(request, nodes)


@pytest.fixture
def client(kronos_addr: str) -> Iterator[KronosClient]:
    """A client of the module's shared server."""
    with KronosClient([kronos_addr], timeout=5.0) as c:
        yield c
