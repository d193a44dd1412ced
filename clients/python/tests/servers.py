"""Run real ``weft kronos`` servers (and graph servers: :func:`start`) as
subprocesses, for the client tests.

Every server listens on a free loopback port with its own data directory and
log file; ``running_nodes`` kills every node it started when it exits, and an
atexit hook kills any left behind if pytest itself dies first.
"""

from __future__ import annotations

import atexit
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from weft import KronosClient, KronosError

CLIENT_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = CLIENT_DIR.parents[1]

START_TIMEOUT = 20.0  # seconds for a server's port to accept connections
LEADER_TIMEOUT = 20.0  # seconds for a cluster to elect a leader
BUILD_TIMEOUT = 600.0  # seconds for go build
LOG_TAIL = 4000  # characters of a node's log shown on failure

_live: set[subprocess.Popen[bytes]] = set()


@atexit.register
def _kill_leftovers() -> None:
    # Empty after a normal run; catches nodes whose fixture teardown never ran.
    for proc in list(_live):
        _kill(proc)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    _live.discard(proc)


@dataclass
class Node:
    """One running ``weft kronos`` process."""

    node_id: int
    addr: str
    data_dir: Path
    log_path: Path
    proc: subprocess.Popen[bytes]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the process (a crash, not a clean shutdown) and reap it."""
        _kill(self.proc)

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL:]
        except OSError as err:
            return f"<no log: {err}>"


@dataclass
class Cluster:
    """Three replicas; ``addrs`` in node-id order."""

    nodes: list[Node]

    @property
    def addrs(self) -> list[str]:
        return [n.addr for n in self.nodes]

    def node_at(self, addr: str) -> Node:
        return next(n for n in self.nodes if n.addr == addr)


def free_ports(n: int) -> list[int]:
    """Ports the kernel had free just now (all held at once, so distinct)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _wait_for_port(node: Node, deadline: float) -> None:
    host, port = node.addr.rsplit(":", 1)
    while True:
        if not node.alive():
            pytest.fail(
                f"weft kronos node {node.node_id} exited with {node.proc.returncode} "
                f"before listening on {node.addr}:\n{node.log_tail()}",
                pytrace=False,
            )
        try:
            with socket.create_connection((host, int(port)), timeout=0.25):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(
                f"weft kronos node {node.node_id} not listening on {node.addr} "
                f"after {START_TIMEOUT}s:\n{node.log_tail()}",
                pytrace=False,
            )
        time.sleep(0.05)


@contextmanager
def running_nodes(weft_bin: Path, root: Path, count: int) -> Iterator[list[Node]]:
    """Start ``count`` nodes (a cluster when count > 1); kill them all on exit."""
    ports = free_ports(count)
    addrs = [f"127.0.0.1:{p}" for p in ports]
    peers = ",".join(f"{i + 1}={a}" for i, a in enumerate(addrs))
    nodes: list[Node] = []
    try:
        for i, addr in enumerate(addrs):
            node_id = i + 1
            data_dir = root / f"node{node_id}"
            data_dir.mkdir()
            log_path = root / f"node{node_id}.log"
            args = [str(weft_bin), "kronos", "--id", str(node_id), "--addr", addr,
                    "--data-dir", str(data_dir)]
            if count > 1:
                args += ["--peers", peers]
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, cwd=root)
            _live.add(proc)
            nodes.append(Node(node_id, addr, data_dir, log_path, proc))
        deadline = time.monotonic() + START_TIMEOUT
        for node in nodes:
            _wait_for_port(node, deadline)
        yield nodes
    finally:
        for node in nodes:
            node.kill()


def wait_for_leader(cluster: Cluster, timeout: float = LEADER_TIMEOUT) -> str:
    """Return the address of the node that reports itself leader."""
    deadline = time.monotonic() + timeout
    with KronosClient(cluster.addrs, timeout=1.0, retry_max=0) as probe:
        while time.monotonic() < deadline:
            for node in cluster.nodes:
                if not node.alive():
                    continue
                try:
                    if probe.stats(node.addr)["is_leader"]:
                        return node.addr
                except KronosError:
                    pass
            time.sleep(0.1)
    logs = "\n".join(f"--- node {n.node_id} ---\n{n.log_tail()}" for n in cluster.nodes)
    pytest.fail(f"no leader elected within {timeout}s:\n{logs}", pytrace=False)


# ---------------------------------------------------------------------------
# Graph servers (weft serve, or the fakeserve test binary)

GRAPH_START_TIMEOUT = 30.0  # seconds for a graph server to answer /healthz
STOP_TIMEOUT = 15.0  # seconds for a graceful stop


@dataclass
class Server:
    """One running server process."""

    kind: str
    url: str
    grpc_addr: str
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL:]
        except OSError as e:
            return f"<no log: {e}>"

    def stop(self) -> int:
        """SIGTERM, then SIGKILL if it does not stop in time; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


def start(kind: str, binary: Path, args: list[str], root: Path) -> Server:
    http_port, grpc_port = free_ports(2)
    grpc_addr, http_addr = f"127.0.0.1:{grpc_port}", f"127.0.0.1:{http_port}"
    root.mkdir(parents=True, exist_ok=True)
    log_path = root / f"{kind}-{http_port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(binary), *args, "--grpc-addr", grpc_addr, "--http-addr", http_addr],
                                stdin=subprocess.DEVNULL if kind == "serve" else subprocess.PIPE,
                                stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = Server(kind, f"http://{http_addr}", grpc_addr, proc, log_path)
    deadline = time.monotonic() + GRAPH_START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{kind} exited with {proc.returncode} before serving:\n{server.log_tail()}",
                        pytrace=False)
        try:
            with urllib.request.urlopen(server.url + "/healthz", timeout=1) as resp:
                if resp.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"{kind} not healthy after {GRAPH_START_TIMEOUT}s:\n{server.log_tail()}", pytrace=False)
        time.sleep(0.05)
