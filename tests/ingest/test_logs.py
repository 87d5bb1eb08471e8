"""Log redaction (README, Secrets): secret-named fields and registered secret values never reach a
log line, tracebacks included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from ingest import logs


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    saved = set(logs._secrets)
    logs._secrets.clear()
    yield
    logs._secrets.clear()
    logs._secrets.update(saved)


def _line(capsys: pytest.CaptureFixture[str], emit: object) -> str:
    logs.configure()
    assert callable(emit)
    emit(structlog.get_logger("test"))
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "name",
    [
        "password",
        "mysql.password",
        "kafka.sasl.password",
        "properties.sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.password",
        "s3.secret-key",
        "fs.s3a.secret.key",
        "s3.access-key",
        "fs.s3a.access.key",
        "sasl.oauthbearer.client.secret",
        "token",
        "credentials",
        "ssl.key.pem",
        "properties.ssl.keystore.key",
        "sasl.oauthbearer.config",
    ],
)
def test_secret_names(name: str) -> None:
    assert logs.is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["hostname", "username", "ssl.key", "ssl.ca", "table", "key", "batch", "ssl.certificate.pem"]
)
def test_ordinary_names(name: str) -> None:
    assert not logs.is_secret_name(name)


def test_secret_named_fields_are_masked_at_any_depth(capsys: pytest.CaptureFixture[str]) -> None:
    conf = {"properties.sasl.password": "pw-one", "nested": {"s3.secret-key": "pw-two"}, "host": "h1"}
    line = _line(capsys, lambda log: log.info("options", conf=conf, password="pw-three"))
    assert "pw-one" not in line and "pw-two" not in line and "pw-three" not in line
    assert line.count(logs.MASK) == 3 and "h1" in line


def test_registered_values_are_masked_in_text_and_tracebacks(capsys: pytest.CaptureFixture[str]) -> None:
    logs.register_secret("Marker-Secret-1")

    def emit(log: structlog.typing.FilteringBoundLogger) -> None:
        log.warning("connect failed with Marker-Secret-1", items=["x Marker-Secret-1"])
        try:
            raise ValueError("bad Marker-Secret-1")
        except ValueError:
            log.exception("stopped")

    line = _line(capsys, emit)
    assert "Marker-Secret-1" not in line
    assert "ValueError: bad " + logs.MASK in line


def test_json_lines_are_redacted_too(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_LOG_FORMAT", "json")
    logs.register_secret("Marker-Secret-2")
    line = _line(capsys, lambda log: log.info("x Marker-Secret-2", token="abc"))
    assert "Marker-Secret-2" not in line and "abc" not in line


def test_short_values_are_not_masked_in_text_but_by_name() -> None:
    logs.register_secret("pw")
    assert logs.redact_text("pwd pw") == "pwd pw"
    logs.register_secret("abcd")
    logs.register_secret("abcdef")
    assert logs.redact_text("x abcdef y abcd") == f"x {logs.MASK} y {logs.MASK}"
