"""README's "Paimon options" tables are what the command line does: README equals the rendering of the
tables the CLI checks against, and every README row is walked (issue #29): an honoured option's value
reaches the job (the parsed arguments, or what the source hands Spark), a no-effect one is accepted and
reported for the start-up log, a refused one stops the command before anything runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ingest.cli.main import parse_args, settings_from_args
from ingest.cli.options_doc import END, START, render
from ingest.cli.paimon_actions import ALL, DB_SYNC, MAINTENANCE, SYNC, TABLE_SYNC
from ingest.cli.paimon_args import PaimonArgsError
from ingest.cli.settings import SyncSettings
from ingest.job import parse_spec, source_for
from tests.ingest.kafka.test_options import REGISTRY_COMPANIONS

README = Path(__file__).resolve().parents[3] / "README.md"
GROUPS = {"every action": ALL, "sync actions": SYNC, "*-sync-table": TABLE_SYNC, "*-sync-database": DB_SYNC}
GROUPS["maintenance actions"] = MAINTENANCE


def _section() -> str:
    text = README.read_text()
    return text[text.index(START) : text.index(END) + len(END)]


def _rows(heading: str) -> list[list[str]]:
    """The cells of the README table under ``#### heading``, code quotes removed."""
    part = _section().split(f"#### {heading}\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = []
    for line in part.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append([c.replace("\\|", "|").strip("`") for c in cells])
    return rows


def test_readme_tables_are_generated_from_the_cli_tables() -> None:
    assert _section() == render(), "README differs: run python -m ingest.cli.options_doc --write README.md"


BASE = {
    "mysql-sync-table": ["--mysql-conf", "hostname=h", "--mysql-conf", "username=u", "--mysql-conf",
                         "database-name=d", "--mysql-conf", "table-name=t", "--table", "t"],
    "mysql-sync-database": ["--mysql-conf", "hostname=h", "--mysql-conf", "username=u", "--mysql-conf",
                            "database-name=d"],
    "kafka-sync-table": ["--kafka-conf", "properties.bootstrap.servers=b:9092", "--kafka-conf", "topic=t",
                         "--kafka-conf", "value.format=canal-json", "--table", "t"],
    "kafka-sync-database": ["--kafka-conf", "properties.bootstrap.servers=b:9092", "--kafka-conf", "topic=t",
                            "--kafka-conf", "value.format=canal-json"],
    "create-tag": ["--table", "t", "--tag-name", "x"],
    "delete-tag": ["--table", "t", "--tag-name", "x"],
    "rollback-to": ["--table", "t", "--version", "1"],
    "drop-partition": ["--table", "t", "--partition", "p=1"],
    "rescale": ["--table", "t", "--bucket-num", "2"],
}  # fmt: skip


def _argv(action: str, extra: list[str]) -> list[str]:
    argv = ["--warehouse", "/tmp/wh", "--database", "ods", *BASE.get(action, ["--table", "t"])]
    # an option under test replaces the base's own (single-valued) occurrence
    if extra and extra[0] in argv and extra[0] not in ("--mysql-conf", "--kafka-conf", "--partition"):
        i = argv.index(extra[0])
        argv = argv[:i] + argv[i + 2 :]
    return [action, *argv, *extra]


def _action_cases() -> list[Any]:
    cases = []
    for option, actions, treatment, example, _what in _rows("Action arguments"):
        names = GROUPS.get(actions) or tuple(a.strip() for a in actions.split(","))
        for action in names:
            value = [] if example == "(no value)" else [example]
            cases.append(pytest.param(action, option, value, treatment, id=f"{action}{option}"))
    return cases


@pytest.mark.parametrize(("action", "option", "value", "treatment"), _action_cases())
def test_action_option_treatment(action: str, option: str, value: list[str], treatment: str) -> None:
    if treatment == "refused":
        with pytest.raises(PaimonArgsError, match=re.escape(option)):
            parse_args(_argv(action, [option, *value]))
        return
    args, normalised = parse_args(_argv(action, [option, *value]))
    assert normalised is not None
    if treatment == "no effect":
        assert option in normalised.no_effect
        return
    assert treatment.startswith("honoured")
    base, _ = parse_args(_argv(action, []))
    dest = option[2:].replace("-", "_")
    assert getattr(args, dest) != getattr(base, dest), f"{option} {value} did not reach the parsed arguments"
    # Paimon's other spelling reads the same
    paimon_spelling = [
        "--" + a[2:].replace("-", "_") if a.startswith("--") else a for a in _argv(action, [option, *value])
    ]
    underscored, _ = parse_args(paimon_spelling)
    assert vars(underscored) == vars(args)


def _settings(action: str, flag: str, conf: dict[str, str]) -> SyncSettings:
    argv = _argv(action, [x for k, v in conf.items() for x in (flag, f"{k}={v}")])
    if "topic-pattern" in conf:  # one of topic and topic-pattern
        i = argv.index("topic=t")
        del argv[i - 1 : i + 1]
    return settings_from_args(parse_args(argv)[0])


def _source_options(settings: SyncSettings) -> dict[str, str]:
    source = source_for(settings, "/tmp/ck")
    options: dict[str, str] = source.options(parse_spec(settings, source.value_format), 2)
    return options


CONF_FLAGS = {
    "--mysql-conf": ("mysql-sync-table", "mysql-sync-database"),
    "--kafka-conf": ("kafka-sync-table", "kafka-sync-database"),
    "--catalog-conf": ("kafka-sync-table",),
    "--table-conf": ("kafka-sync-table",),
}


def _conf_cases() -> list[Any]:
    cases = []
    for flag, actions in CONF_FLAGS.items():
        for key, treatment, example, _what in _rows(f"`{flag}` keys"):
            if key.endswith("*"):
                sub, _, value = example.partition("=")
                key, example = key[:-1] + sub, value
            value = "" if example == "(a file)" else example
            kind, _, refused = treatment.partition("; refused: ")
            refused = refused.strip("`")
            for action in actions:
                if key == "table-name" and action.endswith("database"):
                    continue  # refused there with Paimon's message (test_mysql_settings)
                cases.append(pytest.param(action, flag, key, value, kind, id=f"{action}{flag}{key}"))
                if refused:
                    cases.append(pytest.param(action, flag, key, refused, "refused", id=f"{action}{flag}{key}!"))
    return cases


# Keys that act only together with a start-up mode: given on both sides, the mode only with the key.
TOGETHER = {
    "scan.startup.specific-offset.file": {"scan.startup.specific-offset.pos": "4"},
    "scan.startup.specific-offset.pos": {"scan.startup.specific-offset.file": "mysql-bin.000003"},
    "scan.startup.specific-offset.gtid-set": {},
    "scan.startup.timestamp-millis": {},
    "scan.startup.specific-offsets": {},
    "ssl.cert": {"ssl.key": "FILE"},
    "ssl.key": {"ssl.cert": "FILE"},
    "jdbc.properties.verifyServerCertificate": {"ssl.ca": "FILE"},
    **REGISTRY_COMPANIONS,
}
MODES = {
    "--mysql-conf": {"scan.startup.timestamp-millis": "timestamp"},
    "--kafka-conf": {"scan.startup.timestamp-millis": "timestamp", "scan.startup.specific-offsets": "specific-offsets"},
}
# Keys each of which needs the other: neither alone is a valid configuration.
PAIRED = ("ssl.cert", "ssl.key", "schema.registry.ssl.certificate.location", "schema.registry.ssl.key.location")
FILES = (
    "password-file",
    "ssl.ca",
    "ssl.cert",
    "ssl.key",
    "schema.registry.ssl.ca.location",
    "schema.registry.ssl.certificate.location",
    "schema.registry.ssl.key.location",
)


@pytest.mark.parametrize(("action", "flag", "key", "value", "treatment"), _conf_cases())
def test_conf_key_treatment(action: str, flag: str, key: str, value: str, treatment: str, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("secret")
    if key in FILES:  # a real file
        value = str(tmp_path / "f")
    together = {k: str(tmp_path / "f") if v == "FILE" else v for k, v in TOGETHER.get(key, {}).items()}
    if key.startswith("scan.startup."):
        together["scan.startup.mode"] = MODES.get(flag, {}).get(key, "specific-offset")
    if treatment == "refused":
        with pytest.raises((ValidationError, ValueError), match=re.escape(key)):
            _settings(action, flag, {**together, key: value})
        return
    settings = _settings(action, flag, {**together, key: value})
    assert (f"{flag} {key}" in settings.no_effect_options) == (treatment == "no effect")
    if treatment == "honoured" and flag in ("--mysql-conf", "--kafka-conf"):
        base = {k: v for k, v in together.items() if k != "scan.startup.mode"}
        if key.startswith("scan.startup.specific-offset.") or key in PAIRED:
            base = {}  # the companion alone is not a valid configuration
        options = _source_options(settings)
        assert options != _source_options(_settings(action, flag, base)), f"{flag} {key}={value} did not reach it"
