"""``docker-compose.yml`` works as written, as far as this machine can tell without a Docker engine: the
file is valid for docker-compose, and its services' own entrypoints — the MySQL seed script, the writer,
the canal-json producer, and the two lakecdc command lines exactly as the file spells them — run against
a real MariaDB and broker on loopback (hosts, ports, passwords and the warehouse path swapped for the
test's), ending with tables equal to their sources and a ``lakecdc query`` that shows rows."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy.canal_stream import generate, typed
from deploy.local_kafka import LocalKafka
from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.main import main
from tests.paimon_read import read_pypaimon, read_rust

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def stack() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def mysql(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    # its own server: the seed script creates `shop` as the compose stack's MySQL does
    server = LocalMariaDB(str(tmp_path_factory.mktemp("compose-mysql")))
    try:
        yield server
    finally:
        server.close()


def _compose_command() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return None


def test_the_file_is_valid_for_docker_compose(stack: dict[str, Any]) -> None:
    command = _compose_command()
    assert command is not None, "docker-compose is missing: `make install` installs it (deploy/install-system-deps.sh)"
    done = subprocess.run([*command, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    services = stack["services"]
    # every job waits for a healthy source, and every source it waits for has a healthcheck
    for name in ("lakecdc-mysql", "lakecdc-kafka", "mysql-writer", "kafka-producer"):
        for dependency, how in services[name]["depends_on"].items():
            assert how["condition"] in ("service_healthy", "service_started"), (name, dependency)
            if how["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], dependency


def _entrypoint(service: dict[str, Any], swap: dict[str, str], extra: list[str]) -> list[str]:
    """The service's ``python -m module`` entrypoint and command, with the stack's hosts swapped for ours."""
    entry = service["entrypoint"]
    assert entry[:2] == ["python", "-m"]
    return [sys.executable, "-m", *entry[2:], *(swap.get(arg, arg) for arg in service["command"]), *extra]


def _sync_command(service: dict[str, Any], swap: dict[str, str], warehouse: Path) -> list[str]:
    """A lakecdc service's command line with hosts, password and the warehouse volume swapped."""
    out: list[str] = []
    for arg in service["command"]:
        for old, new in swap.items():
            arg = arg.replace(old, new)
        out.append(arg.replace("/warehouse", str(warehouse)))
    return [*out, "--available-now"]


def test_the_services_entrypoints_fill_and_sync_both_sources(
    stack: dict[str, Any],
    mysql: LocalMariaDB,
    kafka: LocalKafka,
    spark: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    services = stack["services"]
    # MySQL: the seed script the mysql service mounts into /docker-entrypoint-initdb.d
    (mount,) = services["mysql"]["volumes"]
    mysql.run_script((ROOT / mount.split(":")[0]).read_text())
    writer_swap = {"mysql": "127.0.0.1", "lakecdc": ROOT_PASSWORD}
    writer = _entrypoint(
        services["mysql-writer"],
        writer_swap,
        ["--port", str(mysql.port), "--iterations", "150", "--interval", "0", "--ready-file", str(tmp_path / "w")],
    )
    subprocess.run(writer, cwd=ROOT, check=True, timeout=120)
    assert (tmp_path / "w").exists()  # what the writer's healthcheck looks for

    # Kafka: the producer creates its topic and produces one round of changes
    topic = f"shop_cdc_{uuid.uuid4().hex[:8]}"
    producer_swap = {"kafka:9092": kafka.bootstrap, "shop_cdc": topic}
    producer = _entrypoint(
        services["kafka-producer"],
        producer_swap,
        # one record per batch: the test broker's end offsets are exact only so (deploy/local_kafka.py)
        ["--rounds", "1", "--keys", "300", "--ready-file", str(tmp_path / "p"), "--batch-messages", "1"],
    )
    subprocess.run(producer, cwd=ROOT, check=True, timeout=120)
    assert (tmp_path / "p").exists()

    warehouse = tmp_path / "warehouse"
    mysql_swap = {"hostname=mysql": "hostname=127.0.0.1", "password=lakecdc": f"password={ROOT_PASSWORD}"}
    mysql_job = _sync_command(services["lakecdc-mysql"], mysql_swap, warehouse)
    assert main([*mysql_job, "--mysql-conf", f"port={mysql.port}"]) == 0
    kafka_job = _sync_command(
        services["lakecdc-kafka"], {"kafka:9092": kafka.bootstrap, "topic=shop_cdc": f"topic={topic}"}, warehouse
    )
    assert main(kafka_job) == 0

    conn = mysql.connect("shop")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id, customer_id, amount, status FROM orders ORDER BY id")
            orders = [dict(zip(("id", "customer_id", "amount", "status"), r, strict=True)) for r in cur.fetchall()]
            cur.execute("SELECT id, city FROM customers ORDER BY id")
            customers = [{"id": r[0], "city": r[1]} for r in cur.fetchall()]
    finally:
        conn.close()
    assert len(orders) > 3  # the writer made changes
    for read in (read_rust, read_pypaimon):
        synced = sorted(read(str(warehouse), "ods_mysql.orders"), key=lambda r: r["id"])
        assert [{k: r[k] for k in ("id", "customer_id", "amount", "status")} for r in synced] == orders
        synced_customers = sorted(read(str(warehouse), "ods_mysql.customers"), key=lambda r: r["id"])
        assert [{"id": r["id"], "city": r["city"]} for r in synced_customers] == customers

    expected = generate(keys=300, updates=3, seed=1).expected  # the producer's first round
    for table, rows in expected.items():
        want = sorted((typed(r) for r in rows.values()), key=lambda r: r["id"])
        assert sorted(read_rust(str(warehouse), f"ods_kafka.{table}"), key=lambda r: r["id"]) == want

    # the quick start's last step: `lakecdc query` through the lakecdc-query service's entrypoint
    capsys.readouterr()
    query = "SELECT count(*) AS n, sum(amount) AS total FROM orders"
    assert main(["query", query, "--warehouse", str(warehouse), "--database", "ods_mysql", "--output", "json"]) == 0
    shown = capsys.readouterr().out
    total = sum((o["amount"] for o in orders), Decimal(0))
    assert f'"n":{len(orders)}' in shown and str(total) in shown, shown
