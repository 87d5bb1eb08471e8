"""``--kafka-conf``: every row of KAFKA_OPTIONS does what its treatment says (no broker needed), and
where Paimon fails, lakecdc fails too, quoting Paimon's message (#29)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from ingest.conf_options import ConfOption, Treatment
from ingest.kafka.job_source import KafkaSource
from ingest.kafka.options import KAFKA_OPTIONS, check_kafka_conf, librdkafka_config, topic_list
from ingest.kafka.source import kafka_properties
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from ingest.source import Action, SourceSettings

BASE = {"properties.bootstrap.servers": "b:9092", "topic": "t", "value.format": "canal-json"}


def _conf_key(option: ConfOption) -> tuple[str, str]:
    """The key and value that exercise a row (a prefix row's example is ``suffix=value``)."""
    if option.key.endswith("*"):
        suffix, value = option.example.split("=", 1)
        return option.key[:-1] + suffix, value
    return option.key, option.example


# The Schema Registry's client settings act with debezium-avro and the keys they need beside them ("FILE": a
# readable file); the README's walking test (tests/ingest/cli/test_paimon_options_table.py) uses them too.
REGISTRY_BASE = {"value.format": "debezium-avro", "schema.registry.url": "https://r:8081"}
REGISTRY_COMPANIONS = {
    "schema.registry.basic.auth.credentials.source": {"schema.registry.basic.auth.user.info": "reader:pw"},
    "schema.registry.ssl.certificate.location": {"schema.registry.ssl.key.location": "FILE"},
    "schema.registry.ssl.key.location": {"schema.registry.ssl.certificate.location": "FILE"},
    "schema.registry.ssl.key.password": {
        "schema.registry.ssl.certificate.location": "FILE",
        "schema.registry.ssl.key.location": "FILE",
    },
}


PAIRED = ("schema.registry.ssl.certificate.location", "schema.registry.ssl.key.location")


def _pem() -> str:
    """A readable file for the registry's PEM options (the checks open nothing but the path)."""
    path = Path(tempfile.gettempdir()) / "lakecdc-test-registry.pem"
    path.write_text("-----BEGIN CERTIFICATE-----\n")
    return str(path)


def _base_for(key: str) -> dict[str, str]:
    base = dict(BASE)
    if key == "topic-pattern":
        del base["topic"]  # exactly one of topic / topic-pattern, as in Paimon
    if key.startswith("schema.registry.") and key != "schema.registry.url":
        base |= REGISTRY_BASE | {k: _pem() if v == "FILE" else v for k, v in REGISTRY_COMPANIONS.get(key, {}).items()}
    return base


def _options(conf: dict[str, str], action: Action = Action.KAFKA_SYNC_DATABASE) -> dict[str, str]:
    settings = cast(SourceSettings, SimpleNamespace(kafka_conf=conf, action=action))
    source = KafkaSource(settings, "/tmp/ck")
    return source.options(ParseSpec(source.value_format, TableRouter(database="ods")), 2)


ROWS = [pytest.param(o, id=o.key) for o in KAFKA_OPTIONS.options]


def _rows(treatment: Treatment) -> list[Any]:
    return [pytest.param(o, id=o.key) for o in KAFKA_OPTIONS.options if o.treatment is treatment]


@pytest.mark.parametrize("option", ROWS)
def test_each_row_has_an_example_its_check_takes(option: ConfOption) -> None:
    key, value = _conf_key(option)
    assert KAFKA_OPTIONS.lookup(key) is option
    if option.check is not None:
        assert option.check(value) is None
    if option.refused_example is not None:
        assert option.check is not None and option.check(option.refused_example) is not None


@pytest.mark.parametrize("option", _rows(Treatment.HONOURED))
def test_honoured_rows_change_what_the_source_hands_spark(option: ConfOption) -> None:
    key, value = _conf_key(option)
    if key.startswith("schema.registry.ssl.") and key.endswith(".location"):
        value = _pem()
    base = _base_for(key)
    conf = {**base, key: value}
    assert check_kafka_conf(conf) == []
    if key in PAIRED:  # the certificate and its key: neither works alone
        base = {k: v for k, v in base.items() if k not in PAIRED}
    assert _options(conf) != _options(base)


@pytest.mark.parametrize("option", _rows(Treatment.NO_EFFECT))
def test_no_effect_rows_are_accepted_listed_and_change_nothing(option: ConfOption) -> None:
    key, value = _conf_key(option)
    conf = {**BASE, key: value}
    assert check_kafka_conf(conf) == [key]
    assert _options(conf) == _options(BASE)  # never handed to librdkafka, which may not know it


@pytest.mark.parametrize("option", _rows(Treatment.REFUSED))
def test_refused_rows_are_refused_at_start_up(option: ConfOption) -> None:
    key, value = _conf_key(option)
    with pytest.raises(ValueError, match=f"--kafka-conf {key} is refused: "):
        check_kafka_conf({**BASE, key: value})


def test_jaas_refusal_points_to_librdkafkas_properties() -> None:
    with pytest.raises(ValueError, match=r"properties\.sasl\.username and properties\.sasl\.password"):
        check_kafka_conf({**BASE, "properties.sasl.jaas.config": "x required;"})


@pytest.mark.parametrize(
    ("conf", "paimon"),
    [
        ({"topic": "t", "value.format": "canal-json"}, "kafka_conf [properties.bootstrap.servers] must be specified."),
        ({"properties.bootstrap.servers": "b", "topic": "t"}, "kafka_conf [value.format] must be specified."),
        (
            {"properties.bootstrap.servers": "b", "value.format": "canal-json"},
            "kafka_conf must and can only set one of the following options: topic,topic-pattern.",
        ),
        (
            {**BASE, "topic-pattern": "t.*"},
            "kafka_conf must and can only set one of the following options: topic,topic-pattern.",
        ),
        ({**BASE, "value.format": "togg-json"}, "This format: togg-json is not supported."),
        (
            {**BASE, "scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0;offset:1"},
            "Invalid properties 'scan.startup.specific-offsets' should follow the format "
            "'partition:0,offset:42;partition:1,offset:300', but is 'partition:0;offset:1'.",
        ),
        (
            {**BASE, "properties.auto.offset.reset": "newest"},
            "auto.offset.reset can not be set to newest. Valid values: [latest,earliest,none]",
        ),
    ],
)
def test_paimon_failures_fail_with_paimons_message(conf: dict[str, str], paimon: str) -> None:
    with pytest.raises(ValueError) as info:
        check_kafka_conf(conf)
    assert paimon in str(info.value)


def test_debezium_avro_needs_a_schema_registry_url() -> None:
    with pytest.raises(ValueError, match=r"value.format=debezium-avro needs --kafka-conf schema.registry.url="):
        check_kafka_conf({**BASE, "value.format": "debezium-avro"})
    assert check_kafka_conf({**BASE, "value.format": "debezium-avro", "schema.registry.url": "http://r:8081"}) == []


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("registry:8081", "is not an http:// or https:// URL"),
        ("http://user:secret-pw@registry:8081", "carries credentials"),
        ("http://a:8081,ftp://b", "is not an http:// or https:// URL"),
    ],
)
def test_schema_registry_url_is_checked(url: str, refused: str) -> None:
    conf = {**BASE, "value.format": "debezium-avro", "schema.registry.url": url}
    with pytest.raises(ValueError, match=refused) as info:
        check_kafka_conf(conf)
    assert "secret-pw" not in str(info.value)


def test_debezium_bson_is_accepted() -> None:
    check_kafka_conf({**BASE, "value.format": "debezium-bson"})


def test_specific_offsets_need_a_topic_list() -> None:
    conf = {k: v for k, v in BASE.items() if k != "topic"} | {"topic-pattern": "t.*"}
    conf |= {"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1"}
    with pytest.raises(ValueError, match="needs --kafka-conf topic"):
        check_kafka_conf(conf)


def test_topics_split_on_semicolons_and_commas_as_paimon_does() -> None:
    assert topic_list("a;b, c;;d") == ("a", "b", "c", "d")
    spec = _spec({**BASE, "topic": "a;b,c"})
    assert spec["topics"] == ["a", "b", "c"]


def _spec(conf: dict[str, str], action: Action = Action.KAFKA_SYNC_DATABASE) -> dict[str, Any]:
    import json

    return cast(dict[str, Any], json.loads(_options(conf, action)["lakecdc.spec"]))


def test_startup_defaults_to_group_offsets_as_in_paimon() -> None:
    # Without a group id nothing is committed, so every partition starts where auto.offset.reset says
    # (lakecdc's default: earliest, which is what lakecdc did before without a group id).
    assert _spec(BASE)["startup_mode"] == "group-offsets"
    assert _spec({**BASE, "scan.startup.mode": "LATEST-OFFSET"})["startup_mode"] == "latest-offset"


def test_offset_reset_reaches_librdkafka_in_its_words() -> None:
    assert librdkafka_config({"properties.auto.offset.reset": "NONE"}) == {"auto.offset.reset": "error"}
    assert librdkafka_config({"properties.auto.offset.reset": "Latest"}) == {"auto.offset.reset": "latest"}
    assert librdkafka_config({"properties.auto.offset.reset": "smallest"}) == {"auto.offset.reset": "smallest"}


def test_an_empty_group_id_is_no_group() -> None:
    # Paimon puts a random UUID in an empty group id: nothing committed, nothing to resume from
    assert librdkafka_config({"properties.group.id": " ", "properties.client.id": "c"}) == {"client.id": "c"}


def test_commit_offsets_on_checkpoint_false_stops_group_commits() -> None:
    assert _spec(BASE)["commit_offsets_to_group"]
    off = {**BASE, "properties.commit.offsets.on.checkpoint": "false"}
    assert not _spec(off)["commit_offsets_to_group"]
    assert "kafka.commit.offsets.on.checkpoint" not in _options(off)


def test_only_table_sync_needs_its_pattern_to_match() -> None:
    conf = {k: v for k, v in BASE.items() if k != "topic"} | {"topic-pattern": "t.*"}
    assert _spec(conf, Action.KAFKA_SYNC_TABLE)["pattern_must_match"]
    assert not _spec(conf, Action.KAFKA_SYNC_DATABASE)["pattern_must_match"]


# Java-client properties of Paimon scripts (#24): translated where librdkafka has the same thing,
# else refused with a hint; an error never quotes a value (it may hold a secret).
PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="Pw-Marker";'
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule required username=alice password=Pw-Marker;"


@pytest.mark.parametrize(
    ("jaas", "mechanism", "expected"),
    [
        (PLAIN, None, {"sasl.username": "alice", "sasl.password": "Pw-Marker", "sasl.mechanism": "PLAIN"}),
        (PLAIN, "PLAIN", {"sasl.username": "alice", "sasl.password": "Pw-Marker", "sasl.mechanism": "PLAIN"}),
        (
            SCRAM,
            "SCRAM-SHA-512",
            {"sasl.username": "alice", "sasl.password": "Pw-Marker", "sasl.mechanism": "SCRAM-SHA-512"},
        ),
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required\n  username="a b"\n'
            '  password="q\\"uo;te";',
            "PLAIN",
            {"sasl.username": "a b", "sasl.password": 'q"uo;te', "sasl.mechanism": "PLAIN"},
        ),
        (
            'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="/etc/k.keytab" '
            'principal="lakecdc@EXAMPLE.COM";',
            "GSSAPI",
            {
                "sasl.kerberos.keytab": "/etc/k.keytab",
                "sasl.kerberos.principal": "lakecdc@EXAMPLE.COM",
                "sasl.mechanism": "GSSAPI",
            },
        ),
    ],
)
def test_jaas_config_becomes_librdkafka_properties(jaas: str, mechanism: str | None, expected: dict[str, str]) -> None:
    conf = {**BASE, "properties.sasl.jaas.config": jaas, "properties.security.protocol": "SASL_SSL"}
    if mechanism:
        conf["properties.sasl.mechanism"] = mechanism
    assert check_kafka_conf(conf) == []
    props = librdkafka_config(conf)
    assert "sasl.jaas.config" not in props and props["security.protocol"] == "SASL_SSL"
    assert {k: v for k, v in props.items() if k.startswith("sasl.")} == expected


@pytest.mark.parametrize(
    ("jaas", "extra", "message"),
    [
        (SCRAM, {}, "needs properties.sasl.mechanism=SCRAM-SHA-256 or SCRAM-SHA-512"),
        (
            PLAIN,
            {"properties.sasl.mechanism": "SCRAM-SHA-256"},
            "PlainLoginModule needs properties.sasl.mechanism=PLAIN",
        ),
        (PLAIN, {"properties.sasl.password": "Pw-Marker"}, "together with properties.sasl.password"),
        (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret=Pw-Marker;",
            {},
            "OAuthBearerLoginModule has no librdkafka translation; .*properties.sasl.oauthbearer.method=oidc",
        ),
        ("PwMarker required;", {}, "is refused: the login module has no librdkafka translation"),
        ("Pw-Marker", {}, "is refused: not a JAAS entry"),
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required password="Pw-Marker";',
            {},
            "needs username",
        ),
        (
            'com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true principal="Pw-Marker";',
            {},
            "with a keytab",
        ),
    ],
)
def test_untranslatable_jaas_is_refused_without_its_value(jaas: str, extra: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        check_kafka_conf({**BASE, "properties.sasl.jaas.config": jaas, **extra})
    assert "Marker" not in str(info.value) and "--kafka-conf properties.sasl.jaas.config" in str(info.value)


def test_key_and_trust_stores(tmp_path: Any) -> None:
    jks, p12, pem = tmp_path / "s.jks", tmp_path / "s.p12", tmp_path / "ca.pem"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    p12.write_bytes(b"\x30\x82\x0a\x1b\x02\x01\x03")
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    for path, kind in ((jks, "a JKS file"), (p12, "a PKCS12 file"), (pem, "a PEM file")):
        with pytest.raises(ValueError, match=f"truststore.location is refused: {kind} .*properties.ssl.ca.location"):
            check_kafka_conf({**BASE, "properties.ssl.truststore.location": str(path)})
    with pytest.raises(ValueError, match=r"is a JKS key store.*-deststoretype PKCS12"):
        check_kafka_conf({**BASE, "properties.ssl.keystore.location": str(jks)})
    conf = {**BASE, "properties.ssl.keystore.location": str(p12), "properties.ssl.keystore.password": "k-pw"}
    conf["properties.ssl.key.password"] = "key-pw"
    assert check_kafka_conf(conf) == []
    props = librdkafka_config(conf)
    assert (props["ssl.keystore.location"], props["ssl.keystore.password"], props["ssl.key.password"]) == (
        str(p12),
        "k-pw",
        "key-pw",
    )


def test_pem_properties_and_endpoint_identification_are_translated() -> None:
    conf = {**BASE, "properties.ssl.keystore.key": "KEY", "properties.ssl.keystore.certificate.chain": "CERT"}
    conf |= {"properties.ssl.truststore.certificates": "CA", "properties.ssl.endpoint.identification.algorithm": ""}
    assert check_kafka_conf(conf) == []
    props = librdkafka_config(conf)
    assert {k: props[k] for k in ("ssl.key.pem", "ssl.certificate.pem", "ssl.ca.pem")} == {
        "ssl.key.pem": "KEY",
        "ssl.certificate.pem": "CERT",
        "ssl.ca.pem": "CA",
    }
    assert props["ssl.endpoint.identification.algorithm"] == "none"
    assert "ssl.keystore.key" not in props


@pytest.mark.parametrize(
    "key", ["properties.ssl.engine.factory.class", "properties.sasl.server.callback.handler.class"]
)
def test_java_class_properties_are_refused(key: str) -> None:
    with pytest.raises(ValueError, match=f"--kafka-conf {key} is refused: names Java classes"):
        check_kafka_conf({**BASE, key: "org.example.X"})


# Spark masks an option's value in plans and the UI when its name matches spark.redaction.regex.
SPARK_REDACTION = re.compile(r"(?i)secret|password|token|access[.]?key")


def test_secret_properties_reach_spark_only_in_an_option_spark_redacts() -> None:
    conf = {**BASE, "properties.sasl.jaas.config": PLAIN, "properties.ssl.keystore.key": "Key-Marker"}
    conf |= {"properties.ssl.key.password": "Kp-Marker", "properties.sasl.oauthbearer.config": "Oauth-Marker"}
    conf |= {"properties.sasl.oauthbearer.client.secret": "Cs-Marker", "properties.ssl.keystore.password": "Ks-Marker"}
    options = _options(conf)
    for key, value in options.items():
        if "Marker" in value:
            assert SPARK_REDACTION.search(key), key
    assert options["kafka.sasl.username"] == "alice" and options["kafka.bootstrap.servers"] == "b:9092"
    properties = kafka_properties(options)
    assert {k: v for k, v in properties.items() if "Marker" in v} == {
        "sasl.password": "Pw-Marker",
        "ssl.key.pem": "Key-Marker",
        "ssl.key.password": "Kp-Marker",
        "sasl.oauthbearer.config": "Oauth-Marker",
        "sasl.oauthbearer.client.secret": "Cs-Marker",
        "ssl.keystore.password": "Ks-Marker",
    }
    assert properties == librdkafka_config(conf)


def test_registry_secrets_reach_spark_only_in_a_redacted_option_and_never_librdkafka(tmp_path: Path) -> None:
    from ingest.kafka.source import KafkaSourceSpec, registry_settings

    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    conf = {
        **BASE,
        "value.format": "debezium-avro",
        "schema.registry.url": "https://registry:8081",
        "schema.registry.basic.auth.user.info": "reader:Ui-Marker",
        "schema.registry.ssl.ca.location": str(pem),
        "schema.registry.ssl.certificate.location": str(pem),
        "schema.registry.ssl.key.location": str(pem),
        "schema.registry.ssl.key.password": "Kp-Marker",
    }
    options = _options(conf)
    for key, value in options.items():
        if "Marker" in value:
            assert SPARK_REDACTION.search(key), key
    assert not any(k.startswith("schema.registry") for k in kafka_properties(options))  # librdkafka refuses them
    spec = KafkaSourceSpec.from_json(options["lakecdc.spec"])
    assert registry_settings(spec, options) == {k: v for k, v in conf.items() if k.startswith("schema.registry.")}


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ({"schema.registry.basic.auth.user.info": "reader"}, "must be USER:PASSWORD"),
        ({"schema.registry.basic.auth.credentials.source": "URL"}, "only USER_INFO|is not supported"),
        ({"schema.registry.basic.auth.credentials.source": "USER_INFO"}, "needs schema.registry.basic.auth.user.info"),
        ({"schema.registry.ssl.key.location": "PEM"}, "need schema.registry.ssl.certificate.location"),
        ({"schema.registry.ssl.certificate.location": "PEM"}, "needs schema.registry.ssl.key.location"),
        ({"schema.registry.ssl.ca.location": "/nowhere/ca.pem"}, "is not a readable file"),
        ({"schema.registry.ssl.truststore.location": "/x.jks"}, "Java keystore"),
    ],
)
def test_registry_client_settings_are_checked_at_start_up(extra: dict[str, str], refused: str, tmp_path: Path) -> None:
    pem = tmp_path / "c.pem"
    pem.write_text("x")
    extra = {k: str(pem) if v == "PEM" else v for k, v in extra.items()}
    conf = {**BASE, "value.format": "debezium-avro", "schema.registry.url": "http://r:8081", **extra}
    with pytest.raises(ValueError, match=refused) as failed:
        check_kafka_conf(conf)
    assert "reader" not in str(failed.value) or "USER_INFO" in refused  # a refused user info is never quoted


def test_registry_user_info_is_a_secret_name() -> None:
    from ingest.logs import is_secret_name

    assert is_secret_name("schema.registry.basic.auth.user.info")
