"""A private ``redis-server`` for tests: started on a free port, never a Redis already in use;
and a private Redis Cluster of such servers."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from typing import Sequence

__all__ = ["RedisServer", "RedisClusterServers", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``redis-server`` on a free port with its own directory; ``url`` to connect, ``stop()``.
    ``extra``: more command-line options (``--name value`` pairs). Raises ``RuntimeError`` when
    redis-server is not installed or does not accept connections within 10 s."""

    def __init__(self, appendonly: bool = False, extra: Sequence[str] = ()) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed (.ci/run installs Debian's redis-server)")
        self.dir = tempfile.mkdtemp(prefix="cheat-redis-")
        self.port = free_port()
        args = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--save", "",
                "--appendonly", "yes" if appendonly else "no", "--daemonize", "no", "--loglevel", "warning", *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def cli(self, *args: str, timeout: float = 30) -> str:
        """``redis-cli`` against this server; its standard output. Raises
        ``subprocess.CalledProcessError`` when it fails."""
        exe = shutil.which("redis-cli") or "redis-cli"
        done = subprocess.run([exe, "-h", "127.0.0.1", "-p", str(self.port), *args], capture_output=True, text=True, timeout=timeout, check=True)
        return done.stdout

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisClusterServers:
    """A private Redis Cluster: ``primaries`` :class:`RedisServer` processes (cluster mode, no
    persistence, no replicas) joined with ``redis-cli --cluster create``; ``url`` names the
    first node (any node will do), ``nodes`` are the servers, ``stop()`` ends them all. Raises
    ``RuntimeError`` when redis-server is missing or the cluster is not ``ok`` within 20 s."""

    def __init__(self, primaries: int = 3) -> None:
        self.nodes: list[RedisServer] = []
        try:
            for _ in range(primaries):
                # the nodes file is relative to the server's own --dir (removed by stop()); the
                # bus port is given, as the default (port + 10000) may be taken or beyond 65535
                self.nodes.append(RedisServer(extra=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                                "--cluster-port", str(free_port()), "--cluster-node-timeout", "5000"]))
            addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
            self.nodes[0].cli("--cluster", "create", *addrs, "--cluster-replicas", "0", "--cluster-yes", timeout=60)
            deadline = time.monotonic() + 20
            while not all("cluster_state:ok" in n.cli("cluster", "info") for n in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        self.nodes = []
