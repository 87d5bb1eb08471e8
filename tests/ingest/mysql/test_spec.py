"""The MySQL source's spec travels as JSON in a Spark option (msgspec, typed): everything but the
password, which travels as the separate, redacted option mysql.password."""

from __future__ import annotations

from dataclasses import replace

from ingest.mysql.client import MySqlConnection
from ingest.mysql.spec import MySqlSourceSpec
from ingest.mysql.ssl import SslSettings
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter


def test_spec_round_trip_keeps_the_password_out() -> None:
    parse = ParseSpec(
        "mysql", TableRouter("ods", table_mapping={"a": "b"}), primary_keys=("id",), computed_columns=("x=upper(a)",)
    )
    spec = MySqlSourceSpec(
        MySqlConnection("h", 3306, "u", "secret", 10, SslSettings("required", "/ca.pem")),
        "d",
        "t",
        "specific-offset",
        parse,
        "/state",
        specific_position=("binlog.000002", 4),
    )
    text = spec.to_json()
    assert "secret" not in text and "password" not in text
    back = MySqlSourceSpec.from_json(text, "pw")
    assert back == replace(spec, connection=replace(spec.connection, password="pw"))
    assert back.specific_position == ("binlog.000002", 4) and back.parse.primary_keys == ("id",)
    assert back.parse.router.route("x", "a") == "ods.b"
