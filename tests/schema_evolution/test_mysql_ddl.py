"""The DDL parser behind the MySQL schema history, against the cases in tests/data/mysql-ddl/
(statements as binlogs carry them, with the definitions MySQL gives them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from schema_evolution.mysql_ddl import apply_ddl
from schema_evolution.mysql_dialect import member_values
from schema_evolution.mysql_tables import Column, DdlError, TableDef

CASES = Path(__file__).parent.parent / "data" / "mysql-ddl" / "cases.txt"


@dataclass
class Case:
    name: str
    statements: list[str] = field(default_factory=list)
    expected: dict[str, TableDef] = field(default_factory=dict)
    error: str | None = None


def _column(text: str) -> Column:
    comment = None
    if " ~" in text:
        text, comment = text.split(" ~", 1)
    charset = None
    if " @" in text:
        text, charset = text.rsplit(" @", 1)
    nullable = not text.endswith(" NOT NULL")
    text = text.removesuffix(" NOT NULL")
    # name, then the type: the type starts at the first word with a known type spelling
    words = text.split(" ")
    for i in range(1, len(words)):
        if words[i].split("(")[0] in _TYPES:
            return Column(" ".join(words[:i]), " ".join(words[i:]), nullable, charset, comment)
    raise ValueError(f"no type in {text!r}")


_TYPES = {
    "int", "bigint", "smallint", "tinyint", "mediumint", "varchar", "char", "text", "enum", "set", "decimal",
    "double", "float", "point", "geometry", "timestamp", "time", "year", "bit", "varbinary",
}  # fmt: skip


def _cases() -> list[Case]:
    cases: list[Case] = []
    for line in CASES.read_text().splitlines():
        if line.startswith("## "):
            cases.append(Case(line[3:]))
        elif line.startswith("> "):
            cases[-1].statements.append(line[2:])
        elif line.startswith("! "):
            cases[-1].error = line[2:]
        elif line.startswith("= "):
            name, rest = line[2:].split(": ", 1)
            columns, keys = rest.rsplit(" |", 1)
            cases[-1].expected[name] = TableDef(
                tuple(_column(c) for c in columns.split(", ")),
                tuple(k.strip() for k in keys.split(",") if k.strip()),
            )
    return cases


def _apply(statements: list[str]) -> dict[str, TableDef]:
    catalog: dict[str, TableDef] = {}
    for statement in statements:
        for name, definition in apply_ddl(catalog, statement, "d").items():
            if definition is None:
                catalog.pop(name, None)
            else:
                catalog[name] = definition
    return catalog


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_case(case: Case) -> None:
    if case.error is not None:
        with pytest.raises(DdlError, match=case.error):
            _apply(case.statements)
        return
    catalog = _apply(case.statements)
    assert sorted(catalog) == sorted(case.expected)
    for name, expected in case.expected.items():
        # The table's default character set is not part of the expectations.
        assert (catalog[name].columns, catalog[name].primary_key) == (expected.columns, expected.primary_key), name


def test_cases_file_has_cases() -> None:
    assert len(_cases()) >= 15


def test_member_values_and_round_trip() -> None:
    assert member_values("enum('x','y''s','a,b')") == ["x", "y's", "a,b"]
    table = _apply(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(3) CHARACTER SET latin1)"])["d.t"]
    assert TableDef.from_json(table.to_json()) == table


def test_comments_follow_create_alter_and_modify() -> None:
    # Paimon's MySqlSyncTableActionITCase.testSchemaEvolutionWithComment, statement by statement.
    catalog = _apply(
        [
            "CREATE TABLE schema_evolution_comment (_id INT comment 'primary', v1 VARCHAR(10) comment 'v1', "
            "PRIMARY KEY (_id)) COMMENT 'schema_evolution_comment'",
            "ALTER TABLE schema_evolution_comment COMMENT 'table_comment_new'",
            "ALTER TABLE schema_evolution_comment MODIFY COLUMN v1 VARCHAR(20) COMMENT 'v1-new'",
            "ALTER TABLE schema_evolution_comment ADD COLUMN v2 INT COMMENT 'v2'",
        ]
    )
    table = catalog["d.schema_evolution_comment"]
    assert table.comment == "table_comment_new"
    assert [(c.name, c.type, c.comment) for c in table.columns] == [
        ("_id", "int", "primary"),
        ("v1", "varchar(20)", "v1-new"),
        ("v2", "int", "v2"),
    ]
