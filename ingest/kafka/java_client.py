"""Kafka's Java-client properties that Paimon scripts carry, read for librdkafka: ``sasl.jaas.config``
translated (PLAIN, SCRAM, Kerberos with a keytab), Java key and trust stores recognised by their first
bytes and refused with the command that converts them. Messages name keys, files and login modules,
never a value (they may hold secrets)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

# Java's PEM-in-a-property keys and librdkafka's names for them.
PEM_PROPERTIES = {
    "ssl.keystore.key": "ssl.key.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.truststore.certificates": "ssl.ca.pem",
}

JAVA_CLASSES = "names Java classes, which librdkafka cannot load"
TRUSTSTORE_HINT = (
    "a Java trust store, which librdkafka does not read: give the CA certificates as a PEM file in "
    "properties.ssl.ca.location (from JKS: keytool -exportcert -rfc -keystore truststore.jks -alias CARoot "
    "-file ca.pem; from PKCS12: openssl pkcs12 -in truststore.p12 -nokeys -out ca.pem)"
)
JAAS_MODULES = (
    "PlainLoginModule, ScramLoginModule (username, password) or Krb5LoginModule (useKeyTab, keyTab, principal)"
)
OAUTH_HINT = (
    "for OAUTHBEARER give properties.sasl.oauthbearer.method=oidc with properties.sasl.oauthbearer.client.id, "
    "properties.sasl.oauthbearer.client.secret and properties.sasl.oauthbearer.token.endpoint.url"
)


def check_login_and_stores(conf: Mapping[str, str]) -> None:
    """Refuses a JAAS entry without a translation and Java stores librdkafka cannot read."""
    if "properties.sasl.jaas.config" in conf:
        translate_jaas(conf)
    if "properties.ssl.truststore.location" in conf:
        path = conf["properties.ssl.truststore.location"]
        raise ValueError(
            f"--kafka-conf properties.ssl.truststore.location is refused: {_store_kind(path)}{TRUSTSTORE_HINT}"
        )
    keystore = conf.get("properties.ssl.keystore.location", "").strip()
    if keystore and _store_kind(keystore).startswith("a JKS"):
        raise ValueError(
            f"--kafka-conf properties.ssl.keystore.location is refused: {keystore} is a JKS key store, which "
            "librdkafka does not read: convert it to PKCS#12 (keytool -importkeystore -srckeystore client.jks "
            "-destkeystore client.p12 -deststoretype PKCS12) or give PEM files as properties.ssl.certificate.location "
            "and properties.ssl.key.location"
        )


def _store_kind(path: str) -> str:
    """What a key or trust store file is, from its first bytes ("" when it cannot be read)."""
    try:
        with open(Path(path.strip()), "rb") as f:
            head = f.read(11)
    except OSError:
        return ""
    if head[:4] in (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce"):
        return f"a JKS file ({path.strip()}): "
    if head.startswith(b"-----BEGIN"):
        return f"a PEM file ({path.strip()}): "
    return f"a PKCS12 file ({path.strip()}): " if head[:1] == b"\x30" else ""


# A JAAS entry: LoginModuleClass flag key=value ...; values quoted ("...") or bare.
_JAAS = re.compile(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*)", re.S)
_JAAS_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')
_PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
_KERBEROS = "com.sun.security.auth.module.Krb5LoginModule"


def translate_jaas(conf: Mapping[str, str]) -> dict[str, str]:
    """``properties.sasl.jaas.config`` as librdkafka properties (no prefix); ``ValueError`` naming the
    key and the login module, never the value, when there is no translation."""
    where = "--kafka-conf properties.sasl.jaas.config"
    hint = (
        f"give properties.sasl.username and properties.sasl.password (PLAIN, SCRAM) with properties.sasl.mechanism "
        f"instead; {OAUTH_HINT}"
    )
    match = _JAAS.fullmatch(conf["properties.sasl.jaas.config"])
    options: dict[str, str] = {}
    rest = match.group(3).strip() if match else ""
    while match and rest and rest != ";":
        option = _JAAS_OPTION.match(rest)
        if option is None:
            raise ValueError(f"{where} is refused: not a JAAS entry 'LoginModule required key=\"value\" ...;'; {hint}")
        value = option.group(2)
        options[option.group(1)] = value[1:-1].replace('\\"', '"') if value.startswith('"') else value
        rest = rest[option.end() :].strip()
    if match is None:
        raise ValueError(f"{where} is refused: not a JAAS entry 'LoginModule required key=\"value\" ...;'; {hint}")
    module = match.group(1)
    mechanism = conf.get("properties.sasl.mechanism", "").strip().upper()
    clash = sorted(k for k in ("properties.sasl.username", "properties.sasl.password") if k in conf)
    if clash:
        raise ValueError(f"{where} is refused together with {', '.join(clash)}: give one or the other")
    if module in (_PLAIN, _SCRAM):
        scram = module == _SCRAM
        if not {"username", "password"} <= set(options):
            raise ValueError(f"{where} is refused: {module} needs username and password")
        if scram and mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ValueError(
                f"{where}: ScramLoginModule needs properties.sasl.mechanism=SCRAM-SHA-256 or SCRAM-SHA-512"
            )
        if not scram and mechanism not in ("", "PLAIN"):
            raise ValueError(f"{where}: PlainLoginModule needs properties.sasl.mechanism=PLAIN")
        out = {"sasl.username": options["username"], "sasl.password": options["password"]}
        return out if mechanism else {**out, "sasl.mechanism": "PLAIN"}
    if module == _KERBEROS:
        if options.get("useKeyTab", "").lower() != "true" or not {"keyTab", "principal"} <= set(options):
            raise ValueError(
                f"{where} is refused: librdkafka logs in to Kerberos with a keytab: give useKeyTab=true keyTab=... "
                "principal=..., or properties.sasl.kerberos.keytab and properties.sasl.kerberos.principal"
            )
        if mechanism not in ("", "GSSAPI"):
            raise ValueError(f"{where}: Krb5LoginModule needs properties.sasl.mechanism=GSSAPI")
        return {"sasl.kerberos.keytab": options["keyTab"], "sasl.kerberos.principal": options["principal"]}
    named = f"login module {module}" if "." in module else "the login module"  # a class name, not a stray value
    raise ValueError(f"{where} is refused: {named} has no librdkafka translation; {hint}")
