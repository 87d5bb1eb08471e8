"""``${env:NAME}`` / ``${file:/path}`` references in --mysql-conf, --kafka-conf and --catalog-conf, and
the dedicated environment variables (README, Secrets): resolved at start-up, errors that name the
option and the variable or file but never a value, every secret registered with the log redaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ingest import logs
from ingest.cli.main import main
from ingest.cli.secrets import resolve_conf
from ingest.cli.settings import SyncSettings
from ingest.kafka.options import librdkafka_config

MYSQL = {"hostname": "h", "username": "u", "database-name": "d", "table-name": "t"}
KAFKA = {"properties.bootstrap.servers": "b:9092", "topic": "t", "value.format": "canal-json"}


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    saved = set(logs._secrets)
    logs._secrets.clear()
    yield
    logs._secrets.clear()
    logs._secrets.update(saved)


def test_env_and_file_references_whole_or_inside_a_value(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("from-a-file\n")
    conf = {
        "password": "${env:MY_PW}",
        "properties.sasl.jaas.config": f'M required username="u" password="${{file:{tmp_path / "pw"}}}";',
        "plain": "no $ reference {here}",
    }
    out = resolve_conf(conf, "--x-conf", {"MY_PW": "from-env"})
    assert out == {
        "password": "from-env",
        "properties.sasl.jaas.config": 'M required username="u" password="from-a-file";',
        "plain": "no $ reference {here}",
    }
    # Every resolved value, and each secret option's whole value, is masked in logs from now on.
    assert "from-env" not in logs.redact_text("from-env from-a-file")
    assert logs.redact_text(out["properties.sasl.jaas.config"]) == logs.MASK


def test_a_file_keeps_all_but_its_last_line_break(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("line1\nline2\n\n")
    assert resolve_conf({"k": f"${{file:{tmp_path / 'pw'}}}"}, "--x-conf", {}) == {"k": "line1\nline2\n"}


def test_a_missing_variable_names_the_option_and_the_variable() -> None:
    with pytest.raises(
        ValueError, match=r"^--mysql-conf password: environment variable NOPE \(\$\{env:NOPE\}\) is not set$"
    ):
        resolve_conf({"password": "${env:NOPE}"}, "--mysql-conf", {})


def test_an_unreadable_file_names_the_option_and_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ValueError, match=rf"^--catalog-conf s3.secret-key: cannot read {missing} .*No such file"):
        resolve_conf({"s3.secret-key": f"${{file:{missing}}}"}, "--catalog-conf", {})


def _mysql(**extra: Any) -> SyncSettings:
    return SyncSettings(action="mysql-sync-table", warehouse="/tmp/wh", database="d", table="t", **extra)


def test_settings_resolve_the_three_conf_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("T_PW", "mysql-secret")
    monkeypatch.setenv("T_S3", "s3-secret")
    settings = _mysql(mysql_conf={**MYSQL, "password": "${env:T_PW}"}, catalog_conf={"s3.secret-key": "${env:T_S3}"})
    assert settings.mysql_password == "mysql-secret" and settings.catalog_conf["s3.secret-key"] == "s3-secret"
    monkeypatch.setenv("T_SASL", "sasl-secret")
    kafka = SyncSettings(
        action="kafka-sync-database",
        warehouse="/tmp/wh",
        database="d",
        kafka_conf={**KAFKA, "properties.sasl.password": "${env:T_SASL}"},
    )
    assert librdkafka_config(kafka.kafka_conf)["sasl.password"] == "sasl-secret"


def test_dedicated_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_MYSQL_PASSWORD", "env-mysql-pw")
    assert _mysql(mysql_conf=MYSQL).mysql_password == "env-mysql-pw"
    assert _mysql(mysql_conf={**MYSQL, "password": "given"}).mysql_password == "given"  # the option wins
    assert "env-mysql-pw" not in repr(_mysql(mysql_conf=MYSQL))
    monkeypatch.setenv("LAKECDC_KAFKA_SASL_PASSWORD", "env-sasl-pw")
    kafka = SyncSettings(action="kafka-sync-database", warehouse="/tmp/wh", database="d", kafka_conf=dict(KAFKA))
    assert librdkafka_config(kafka.kafka_conf)["sasl.password"] == "env-sasl-pw"
    assert logs.redact_text("env-sasl-pw env-mysql-pw") == f"{logs.MASK} {logs.MASK}"


def test_validation_errors_carry_no_option_values() -> None:
    with pytest.raises(ValidationError) as info:
        _mysql(mysql_conf={**MYSQL, "password": "Marker-In-Error", "scan.startup.mode": "bad"})
    assert "Marker-In-Error" not in str(info.value)


def test_the_cli_names_the_missing_variable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["mysql_sync_table", "--warehouse", "/tmp/wh", "--database", "d", "--table", "t"]
    for key, value in {**MYSQL, "password": "${env:LAKECDC_TEST_NO_SUCH_VARIABLE}"}.items():
        argv += ["--mysql_conf", f"{key}={value}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--mysql-conf password: environment variable LAKECDC_TEST_NO_SUCH_VARIABLE" in err
