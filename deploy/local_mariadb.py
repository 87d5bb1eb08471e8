"""A private MariaDB server for trying lakecdc's MySQL source and for its tests (loopback only).

Debian's ``mariadb-server`` package provides the binaries (``deploy/install-system-deps.sh``
installs it when missing); this starts one instance in its own data directory on a free port with
what a CDC source needs: the binlog in ROW format with FULL images and FULL row metadata, utf8mb4.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from deploy.local_kafka import free_port

ROOT_PASSWORD = "lakecdc-root"


def _binary(name: str) -> str:
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and Path(candidate).exists():
            return candidate
    raise FileNotFoundError(f"{name} not found: install Debian's mariadb-server (apt-get install mariadb-server)")


class LocalMariaDB:
    """``mariadbd`` on 127.0.0.1:<port>; ``stop()`` (or ``with``) ends it and removes its files."""

    def __init__(
        self,
        datadir: str | None = None,
        port: int | None = None,
        extra_args: Iterable[str] = (),
        time_zone: str = "+00:00",
        client_ssl: dict[str, Any] | None = None,
    ) -> None:
        self._owned = datadir is None
        # pymysql's ``ssl`` for this object's own TCP connections (a server that requires TLS)
        self.client_ssl = client_ssl
        self.datadir = Path(datadir or tempfile.mkdtemp(prefix="lakecdc-mariadb-"))
        self.port = port or free_port()
        self.extra_args = list(extra_args)
        self.time_zone = time_zone
        self.process: subprocess.Popen[bytes] | None = None
        if not (self.datadir / "mysql").exists():
            subprocess.run(
                [
                    _binary("mariadb-install-db"),
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    "--auth-root-authentication-method=normal",
                    "--user=root",
                    "--skip-test-db",
                ],
                check=True,
                capture_output=True,
            )
        self.start()

    def start(self) -> None:
        log = open(self.datadir / "server.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                _binary("mariadbd"),
                "--no-defaults",
                f"--datadir={self.datadir}",
                f"--socket={self.datadir}/sock",
                f"--pid-file={self.datadir}/pid",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-name-resolve",
                f"--log-bin={self.datadir}/binlog",
                "--binlog-format=ROW",
                "--binlog-row-image=FULL",
                "--binlog-row-metadata=FULL",
                "--server-id=1",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_general_ci",
                f"--default-time-zone={self.time_zone}",
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=16M",
                *self.extra_args,
            ],
            stdout=log,
            stderr=log,
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> None:
        import pymysql

        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                tail = (self.datadir / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"mariadbd exited with code {self.process.returncode}:\n{tail}")
            try:
                conn = pymysql.connect(
                    unix_socket=str(self.datadir / "sock"), user="root", password="", connect_timeout=1
                )
            except pymysql.err.OperationalError as exc:
                if exc.args and exc.args[0] == 1045:  # root already has its password: ready
                    return
                last = exc
                time.sleep(0.2)
                continue
            with conn.cursor() as cur:
                # Loopback TCP access for root (the socket-only default cannot be used over TCP).
                cur.execute(f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{ROOT_PASSWORD}'")
                # mariadb-install-db may already have made root@127.0.0.1 (with no password).
                cur.execute(f"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{ROOT_PASSWORD}'")
                cur.execute(f"ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '{ROOT_PASSWORD}'")
                cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION")
            conn.close()
            return
        raise TimeoutError(f"mariadbd did not start within {timeout} s: {last}")

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        import pymysql

        return pymysql.connect(
            host="127.0.0.1",
            port=self.port,
            user="root",
            password=ROOT_PASSWORD,
            database=database,
            autocommit=True,
            charset="utf8mb4",
            **({"ssl": self.client_ssl} if self.client_ssl else {}),
            **kwargs,
        )

    def execute(self, *statements: str, database: str | None = None) -> None:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            conn.close()

    def run_script(self, text: str, database: str | None = None) -> None:
        """Run a SQL script (statements separated by ';' at line ends; '--' comments skipped)."""
        lines = [ln for ln in text.splitlines() if not ln.strip().startswith("--")]
        statements = [s.strip() for s in "\n".join(lines).split(";\n") if s.strip()]
        self.execute(*[s.rstrip(";") for s in statements], database=database)

    def mysql_conf(self, **extra: str) -> dict[str, str]:
        return {
            "hostname": "127.0.0.1",
            "port": str(self.port),
            "username": "root",
            "password": ROOT_PASSWORD,
            **extra,
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def close(self) -> None:
        self.stop()
        if self._owned:
            shutil.rmtree(self.datadir, ignore_errors=True)

    def __enter__(self) -> LocalMariaDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
