"""mysql-sync-table over TLS against a MariaDB that refuses plain connections
(``require_secure_transport=ON``): the snapshot and the binlog reader both connect with the
configured mode, certificates are verified, and each misconfiguration names its fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_rust
from tests.support.certificates import make_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_mariadb(certs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    server = LocalMariaDB(
        str(tmp_path_factory.mktemp("mariadb-tls")),
        extra_args=[
            f"--ssl-ca={certs / 'ca.pem'}",
            f"--ssl-cert={certs / 'server.pem'}",
            f"--ssl-key={certs / 'server.key'}",
            "--require-secure-transport=ON",
        ],
        client_ssl={"ca": str(certs / "ca.pem"), "check_hostname": False},
    )
    try:
        server.execute(
            "CREATE DATABASE shop",
            "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO shop.t VALUES (1, 'a'), (2, 'b')",
        )
        yield server
    finally:
        server.close()


def _settings(server: LocalMariaDB, warehouse: str, **ssl: str) -> SyncSettings:
    conf = server.mysql_conf(**{"database-name": "shop", "table-name": "t", **ssl})
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        mysql_conf=conf,
        available_now=True,
    )


def test_snapshot_and_binlog_over_verified_tls(
    spark: Any, tls_mariadb: LocalMariaDB, certs: Path, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "wh")
    settings = _settings(tls_mariadb, warehouse, **{"ssl.mode": "verify-identity", "ssl.ca": str(certs / "ca.pem")})
    run(settings)
    assert read_rust(warehouse, "ods.t") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    # the binlog reader connects with the same TLS settings (the server accepts nothing else)
    tls_mariadb.execute("UPDATE shop.t SET v = 'b2' WHERE id = 2", "INSERT INTO shop.t VALUES (3, 'c')")
    run(settings)
    assert read_rust(warehouse, "ods.t") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b2"}, {"id": 3, "v": "c"}]


def test_connector_j_properties_select_the_mode(spark: Any, tls_mariadb: LocalMariaDB, tmp_path: Path) -> None:
    warehouse = str(tmp_path / "wh")
    jdbc = {"jdbc.properties.useSSL": "true", "jdbc.properties.requireSSL": "true"}
    run(_settings(tls_mariadb, warehouse, **jdbc))
    assert [r["id"] for r in read_rust(warehouse, "ods.t")][:2] == [1, 2]


@pytest.mark.parametrize(
    ("ssl", "message"),
    [
        # MariaDB refuses plain connections with "Access denied" (MySQL 8 names insecure transport)
        ({"ssl.mode": "disabled"}, "If the server requires TLS, set ssl.mode=required"),
        ({"jdbc.properties.useSSL": "false"}, "If the server requires TLS, set ssl.mode=required"),
        ({"ssl.mode": "verify-ca", "ssl.ca": "other-ca.pem"}, "The server certificate did not verify"),
    ],
)
def test_misconfigured_tls_names_the_fix(
    spark: Any, tls_mariadb: LocalMariaDB, certs: Path, tmp_path: Path, ssl: dict[str, str], message: str
) -> None:
    if "ssl.ca" in ssl:
        ssl = {**ssl, "ssl.ca": str(certs / ssl["ssl.ca"])}
    with pytest.raises(JobFailed, match=message):
        run(_settings(tls_mariadb, str(tmp_path / "wh"), **ssl))


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ({"ssl.mode": "verify-ca"}, "needs --mysql-conf ssl.ca"),
        ({"ssl.mode": "sometimes"}, "is not one of disabled, preferred"),
        ({"ssl.ca": "/nonexistent.pem", "ssl.mode": "verify-ca"}, "no file '/nonexistent.pem'"),
        ({"ssl.cert": "/etc/hostname"}, "ssl.cert and ssl.key go together"),
        ({"jdbc.properties.trustCertificateKeyStoreUrl": "file:/x.jks"}, "Java keystores cannot be read"),
    ],
)
def test_bad_tls_options_are_refused_before_start(conf: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SyncSettings(
            action="mysql-sync-table",
            warehouse="/tmp/x",
            database="ods",
            table="t",
            mysql_conf={"hostname": "h", "username": "u", "database-name": "d", "table-name": "t", **conf},
        )
