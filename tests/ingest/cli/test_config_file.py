"""``--config job.yaml`` / ``.toml`` (ingest.cli.config_file): precedence command line > environment
> file for every kind of option, unknown keys refused naming file and key, relative paths relative to
the file, and the shipped examples (deploy/examples) read as their actions' settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.cli.config_file import ConfigFileError
from ingest.cli.main import main, parse_args, settings_from_args
from ingest.cli.settings import SyncSettings
from tests.conftest import ROOT

EXAMPLES = ROOT / "deploy" / "examples"
KAFKA = ["--kafka-conf", "properties.bootstrap.servers=b:9092", "--kafka-conf", "topic=t"]
KAFKA += ["--kafka-conf", "value.format=canal-json"]


def _settings(*argv: str) -> SyncSettings:
    settings: SyncSettings = settings_from_args(parse_args(list(argv))[0])
    return settings


def _file(tmp_path: Path, text: str, name: str = "job.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


YAML = """
warehouse: /wh/file
database: ods
table: orders
trigger-interval: 1 min
max_offsets_per_trigger: 100
primary-keys: id,name
kafka-conf:
  properties.bootstrap.servers: file:9092
  topic: from-file
  value.format: canal-json
table-conf:
  bucket: 4
  deletion-vectors.enabled: true
available-now: true
"""


def test_the_file_alone_gives_every_kind_of_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKECDC_TRIGGER_INTERVAL", raising=False)
    s = _settings("kafka-sync-table", "--config", _file(tmp_path, YAML))
    assert (s.warehouse, s.database, s.table) == ("/wh/file", "ods", "orders")
    assert s.trigger_interval == "60 seconds" and s.max_offsets_per_trigger == 100 and s.available_now
    assert s.primary_keys == ("id", "name")
    assert s.kafka_conf["topic"] == "from-file"
    assert s.table_conf == {"bucket": "4", "deletion-vectors.enabled": "true"}  # scalars as the CLI's text


def test_command_line_beats_the_file(tmp_path: Path) -> None:
    s = _settings(
        "kafka-sync-table", "--config", _file(tmp_path, YAML), "--table", "cli", "--trigger-interval", "5s",
        "--kafka-conf", "topic=from-cli", "--table-conf", "bucket=8",
    )  # fmt: skip
    assert s.table == "cli" and s.trigger_interval == "5 seconds"
    # mappings merge key by key: the command line's keys win, the file's others stay
    assert s.kafka_conf["topic"] == "from-cli" and s.kafka_conf["properties.bootstrap.servers"] == "file:9092"
    assert s.table_conf == {"bucket": "8", "deletion-vectors.enabled": "true"}


def test_environment_beats_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_TRIGGER_INTERVAL", "7s")
    monkeypatch.setenv("LAKECDC_TABLE", "env")
    monkeypatch.setenv("LAKECDC_KAFKA_CONF", '{"topic": "from-env"}')
    s = _settings("kafka-sync-table", "--config", _file(tmp_path, YAML))
    assert s.trigger_interval == "7 seconds" and s.table == "env"
    assert s.kafka_conf["topic"] == "from-env" and s.kafka_conf["value.format"] == "canal-json"


def test_command_line_beats_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECDC_TRIGGER_INTERVAL", "7s")
    monkeypatch.setenv("LAKECDC_TYPE_MAPPING", "to-string")
    base = ["kafka-sync-table", "--warehouse", "/wh", "--database", "d", "--table", "t", *KAFKA]
    s = _settings(*base, "--trigger-interval", "3s")
    assert s.trigger_interval == "3 seconds"
    # an option the command line does not give comes from the environment (its argparse default does not win)
    assert s.type_mapping == "to-string"
    assert _settings(*base, "--type-mapping", "tinyint1-not-bool").type_mapping == "tinyint1-not-bool"


def test_required_options_may_come_from_the_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, "warehouse: /wh\ndatabase: ods\n")
    monkeypatch.setenv("LAKECDC_TABLE", "t")
    s = _settings("kafka-sync-table", "--config", path, *KAFKA)
    assert (s.warehouse, s.database, s.table) == ("/wh", "ods", "t")
    monkeypatch.delenv("LAKECDC_TABLE")
    with pytest.raises(ValueError, match="--table is required"):
        _settings("kafka-sync-table", "--config", path, *KAFKA)


def test_an_unknown_key_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    path = _file(tmp_path, "warehouse: /wh\ndatabase: ods\ntable: t\nprimary-key: id\n")
    with pytest.raises(
        ConfigFileError, match=f"--config {path}: 'primary-key' is not an option of the job; did you mean"
    ):
        _settings("kafka-sync-table", "--config", path, *KAFKA)
    # through the command line: its error line, exit code 2
    assert main(["kafka-sync-table", "--config", path, *KAFKA]) == 2


@pytest.mark.parametrize("key", ["action", "config", "verbose"])
def test_keys_that_are_not_job_settings_are_refused(tmp_path: Path, key: str) -> None:
    path = _file(tmp_path, f"{key}: x\n")
    with pytest.raises(ConfigFileError, match=f"'{key}' is not an option"):
        _settings("kafka-sync-table", "--config", path, "--warehouse", "/wh", "--database", "d", "--table", "t", *KAFKA)


def test_a_relative_warehouse_in_the_file_is_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "jobs").mkdir()
    path = _file(tmp_path / "jobs", "warehouse: ../lake\ncheckpoint: ck\ndatabase: ods\ntable: t\n")
    monkeypatch.chdir(ROOT)
    s = _settings("kafka-sync-table", "--config", path, *KAFKA)
    assert s.warehouse == str(tmp_path / "lake") and s.checkpoint == str(tmp_path / "jobs" / "ck")
    # on the command line a relative path stays relative to the working directory
    monkeypatch.chdir(tmp_path)
    s = _settings("kafka-sync-table", "--config", path, "--warehouse", "here", *KAFKA)
    assert s.warehouse == str(tmp_path / "here")


def test_toml_reads_like_yaml(tmp_path: Path) -> None:
    text = 'warehouse = "/wh"\n'
    text += 'database = "ods"\ntable = "t"\n[kafka-conf]\ntopic = "t"\n"value.format" = "debezium-json"\n'
    text += '"properties.bootstrap.servers" = "b:1"\n'
    s = _settings("kafka-sync-table", "--config", _file(tmp_path, text, "job.toml"))
    assert s.kafka_conf == {"topic": "t", "value.format": "debezium-json", "properties.bootstrap.servers": "b:1"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "holds a mapping of option names"),
        ("kafka-conf: topic=t\n", "'kafka_conf' is a mapping"),
        ("a: [\n", "not valid YAML"),
    ],
)
def test_unreadable_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigFileError, match=message):
        _settings("kafka-sync-table", "--config", _file(tmp_path, text))


def test_other_suffixes_and_missing_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match=r"give a \.yaml, \.yml or \.toml file"):
        _settings("kafka-sync-table", "--config", _file(tmp_path, "{}", "job.json"))
    with pytest.raises(ConfigFileError, match="No such file"):
        _settings("kafka-sync-table", "--config", str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize("path", sorted(EXAMPLES.iterdir()), ids=lambda p: p.name)
def test_each_example_file_reads_as_its_actions_settings(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYSQL_PASSWORD", "secret")
    action = path.stem
    s = _settings(action, "--config", str(path))
    assert s.action.value == action
    assert s.warehouse == str((ROOT / "warehouse").resolve()) and s.database == "ods"
