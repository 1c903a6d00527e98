"""A private ``redis-server`` for tests: started on a free port, never a Redis already in use;
and, of such servers, a private Redis Cluster, or a primary with replicas and Sentinels."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from typing import Sequence
from urllib.parse import quote

__all__ = ["RedisServer", "RedisClusterServers", "RedisSentinelServers", "free_port"]


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
        args = [
            exe,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self.dir,
            "--save",
            "",
            "--appendonly",
            "yes" if appendonly else "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            *extra,
        ]
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
        done = subprocess.run(
            [exe, "-h", "127.0.0.1", "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
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
                self.nodes.append(
                    RedisServer(
                        extra=[
                            "--cluster-enabled",
                            "yes",
                            "--cluster-config-file",
                            "nodes.conf",
                            "--cluster-port",
                            str(free_port()),
                            "--cluster-node-timeout",
                            "5000",
                        ]
                    )
                )
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


class RedisSentinelServers:
    """A private Redis Sentinel setup: a primary and ``replicas`` :class:`RedisServer` processes
    (``replicaof`` the primary), then ``sentinels`` ``redis-server --sentinel`` processes
    monitoring it as ``service`` (quorum: a majority of them; a node is down after
    ``down_after_ms`` milliseconds without a reply), the data nodes with ``password`` and the
    sentinels with ``sentinel_password`` when given. ``primary`` and ``replicas`` are the data
    nodes as started, ``sentinel_ports`` the sentinels' ports, ``url`` the ``redis+sentinel://``
    URL naming every sentinel (database 0, the passwords percent-encoded), ``stop()`` ends them all. Raises
    ``RuntimeError`` when redis-server is missing, or a replica is not in sync or a sentinel
    does not see it in sync within 20 s."""

    def __init__(
        self,
        service: str = "cheat",
        replicas: int = 1,
        sentinels: int = 3,
        down_after_ms: int = 1000,
        password: str | None = None,
        sentinel_password: str | None = None,
    ) -> None:
        self.service, self.password, self.sentinel_password = service, password, sentinel_password
        self.replicas: list[RedisServer] = []
        self.sentinels: list[subprocess.Popen] = []
        self.sentinel_ports: list[int] = []
        self.dir = tempfile.mkdtemp(prefix="cheat-sentinel-")
        # every data node may become the primary: none waits 5 s (the default) before a full sync
        auth = ["--requirepass", password, "--masterauth", password] if password else []
        self.primary = RedisServer(extra=["--repl-diskless-sync-delay", "0", *auth])
        try:
            for _ in range(replicas):
                self.replicas.append(
                    RedisServer(
                        extra=[
                            "--repl-diskless-sync-delay",
                            "0",
                            *auth,
                            "--replicaof",
                            "127.0.0.1",
                            str(self.primary.port),
                        ]
                    )
                )
            # the sentinels' first INFO of the primary must list the replicas (the next comes
            # 10 s later), so they start once every replica is in sync
            _wait(
                lambda: self.node_cli(self.primary, "info", "replication").count("state=online") == replicas,
                "the replicas did not sync",
            )
            self.node_cli(
                self.primary,
                "eval",
                "redis.call('set', KEYS[1], 1) return redis.call('del', KEYS[1])",
                "1",
                "cheat:fixture",
            )
            self.wait_in_sync()
            for i in range(sentinels):
                port = free_port()
                conf = f"{self.dir}/sentinel-{i}.conf"  # sentinel rewrites its own file
                with open(conf, "w") as f:
                    f.write(
                        f"port {port}\nbind 127.0.0.1\ndir {self.dir}\nloglevel warning\n"
                        f"sentinel monitor {service} 127.0.0.1 {self.primary.port} {sentinels // 2 + 1}\n"
                        f"sentinel down-after-milliseconds {service} {down_after_ms}\n"
                        f"sentinel failover-timeout {service} 5000\n"
                    )
                    if password:
                        f.write(f'sentinel auth-pass {service} "{password}"\n')
                    if sentinel_password:
                        f.write(f"requirepass {sentinel_password}\nsentinel sentinel-pass {sentinel_password}\n")
                self.sentinels.append(
                    subprocess.Popen(
                        [shutil.which("redis-server") or "redis-server", conf, "--sentinel"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                self.sentinel_ports.append(port)
            # a sentinel promotes only a replica it has a recent INFO from (else NOGOODSLAVE)
            for port in self.sentinel_ports:
                _wait(
                    lambda: (
                        _listening(port)
                        and [r.get("master-link-status") for r in self.replica_states(port)] == ["ok"] * replicas
                    ),
                    "a sentinel does not see the replicas in sync",
                )
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        query = f"?sentinel_password={quote(self.sentinel_password, safe='')}" if self.sentinel_password else ""
        return f"redis+sentinel://{auth}{hosts}/{self.service}/0{query}"

    def node_cli(self, node: RedisServer, *args: str) -> str:
        """``redis-cli`` against a data node (with the password); its standard output."""
        return node.cli(*(["--no-auth-warning", "-a", self.password] if self.password else []), *args, timeout=10)

    def sentinel_cli(self, port: int, *args: str) -> str:
        """``redis-cli`` against the sentinel on ``port``; its standard output."""
        exe = shutil.which("redis-cli") or "redis-cli"
        auth = ["--no-auth-warning", "-a", self.sentinel_password] if self.sentinel_password else []
        return subprocess.run(
            [exe, "-h", "127.0.0.1", "-p", str(port), *auth, *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout

    def wait_in_sync(self, timeout: float = 10) -> None:
        """Wait until every replica has received every write the primary has made so far (its
        replication offset). Raises ``RuntimeError`` after ``timeout`` seconds."""
        offset = _field(self.node_cli(self.primary, "info", "replication"), "master_repl_offset")
        _wait(
            lambda: all(
                _field(self.node_cli(r, "info", "replication"), "slave_repl_offset") >= offset for r in self.replicas
            ),
            "the replicas did not receive every write",
            timeout,
        )

    def replica_states(self, port: int) -> list[dict[str, str]]:
        """``SENTINEL REPLICAS`` of the sentinel on ``port``: a dict of fields per replica."""
        lines = self.sentinel_cli(port, "sentinel", "replicas", self.service).splitlines()
        states: list[dict[str, str]] = []
        for key, value in zip(lines[::2], lines[1::2]):
            if key == "name":
                states.append({})
            states[-1][key] = value
        return states

    def primary_ports(self) -> set[int]:
        """The primary's port as each sentinel names it (one element once they agree)."""
        return {
            int(self.sentinel_cli(p, "sentinel", "get-master-addr-by-name", self.service).split()[1])
            for p in self.sentinel_ports
        }

    def stop(self) -> None:
        for proc in self.sentinels:
            proc.terminate()
        for proc in self.sentinels:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.sentinels = []
        for node in (self.primary, *self.replicas):
            node.stop()
        self.replicas = []
        shutil.rmtree(self.dir, ignore_errors=True)


def _field(info: str, name: str) -> int:
    """A number from ``INFO`` output."""
    return int(info.split(f"{name}:", 1)[1].split()[0])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _wait(ready, what: str, timeout: float = 20) -> None:
    """Poll ``ready()`` every 50 ms until it is true; ``RuntimeError(what)`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(what)
        time.sleep(0.05)
