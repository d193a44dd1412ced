"""The base install is pure Python: the graph client works without gRPC.

grpcio and protobuf are the ``kronos`` extra (``weft[kronos]``, alias
``weft[grpc]``). Without them ``import weft`` works, the graph, cluster and
key-value clients work, and ``weft.KronosClient(...)`` raises an ImportError
that says ``pip install 'weft[kronos]'``. Checked twice: in this interpreter
with grpc and protobuf hidden (fast), and in a fresh venv where ``pip
install`` of the package without extras installs neither, against a real
``weft serve``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import CLIENT_DIR, Server, start

PIP_TIMEOUT = 300.0  # seconds for pip to install the package (it may fetch setuptools)

# Hides grpc and protobuf from imports, as if they were not installed.
_HIDE = """
import importlib.abc, sys
class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" or name.startswith(("grpc.", "google.protobuf")) or name == "google":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Hide())
"""

# Run with the server's URL as argv[1]: the graph client against it, the
# Kronos client refusing with the hint.
_SCRIPT = """
import sys
import weft
assert "grpc" not in sys.modules and "google.protobuf" not in sys.modules, sorted(sys.modules)
url = sys.argv[1]
with weft.Client(url) as c:
    for tx in c.transaction():
        with tx:
            tx.create_vertex("nogrpc/ada")
            tx.set_vertex_prop("nogrpc/ada", "born", 1815)
    assert c.get_vertex("nogrpc/ada").props == {"born": 1815}
    assert c.run("get_node", node="nogrpc/ada")["props"] == {"born": 1815}

async def aio_read():
    async with weft.aio.Client(url) as c:
        return (await c.get_vertex("nogrpc/ada")).props
import asyncio
assert asyncio.run(aio_read()) == {"born": 1815}
assert weft.Order("->") is weft.Order.BEFORE
try:
    weft.KronosClient(["127.0.0.1:1"])
except ImportError as e:
    assert "pip install 'weft[kronos]'" in str(e), e
    print("kronos:", e)
else:
    raise AssertionError("KronosClient made without grpc")
print("ok")
"""


@pytest.fixture(scope="module")
def graph_server(weft_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start("serve", weft_bin, ["serve", "--in-memory"], tmp_path_factory.mktemp("nogrpc"))
    yield s
    s.stop()


def test_import_weft_and_the_graph_client_without_grpc(graph_server: Server) -> None:
    code = _HIDE + _SCRIPT.replace("nogrpc/", "hidden/")
    run = subprocess.run([sys.executable, "-c", code, graph_server.url], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert "pip install 'weft[kronos]'" in run.stdout and run.stdout.endswith("ok\n"), run.stdout


def test_fresh_venv_without_extras_installs_no_grpc(graph_server: Server, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(CLIENT_DIR)],
                         capture_output=True, text=True, timeout=PIP_TIMEOUT, env=env)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    listed = subprocess.run([str(py), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            timeout=60, env=env)
    names = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert "weft" in names and not names & {"grpcio", "protobuf"}, names
    run = subprocess.run([str(py), "-c", _SCRIPT, graph_server.url], capture_output=True, text=True,
                         timeout=60, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "pip install 'weft[kronos]'" in run.stdout and run.stdout.endswith("ok\n"), run.stdout
