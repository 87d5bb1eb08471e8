"""TLS to MySQL: ``--mysql-conf ssl.*`` (PEM files), and the MySQL Connector/J properties Paimon's
users pass as ``jdbc.properties.*`` (``sslMode``, ``useSSL``, ``requireSSL``,
``verifyServerCertificate``), resolved into one ``SslSettings`` that both the snapshot reader
(pymysql) and the binlog reader (mysql-replication, over pymysql) use.

Modes are Connector/J's: ``disabled``; ``preferred`` (the default: TLS when the server offers it);
``required`` (TLS or fail, certificate not checked); ``verify-ca`` (the server certificate must
chain to ``ssl.ca``); ``verify-identity`` (and name the host).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODES = ("disabled", "preferred", "required", "verify-ca", "verify-identity")
SSL_KEYS = {
    "ssl.mode": "disabled, preferred (default), required, verify-ca or verify-identity",
    "ssl.ca": "PEM file of the CA that signed the server certificate (verify-ca, verify-identity)",
    "ssl.cert": "PEM file of a client certificate (with ssl.key)",
    "ssl.key": "PEM file of the client certificate's private key (unencrypted)",
}
# Connector/J properties that only make sense with Java keystores: Python cannot read them.
_KEYSTORE = ("trustCertificateKeyStore", "clientCertificateKeyStore")


@dataclass(frozen=True, slots=True)
class SslSettings:
    mode: str = "preferred"
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @staticmethod
    def from_conf(conf: Mapping[str, str]) -> SslSettings:
        """Resolve and validate; raises ``ValueError`` naming the option."""
        jdbc = {k[len("jdbc.properties.") :]: v.strip() for k, v in conf.items() if k.startswith("jdbc.properties.")}
        keystores = sorted(k for k in jdbc if k.startswith(_KEYSTORE))
        if keystores:
            raise ValueError(
                f"jdbc.properties.{keystores[0]}: Java keystores cannot be read by lakecdc; give the "
                f"certificates as PEM files with --mysql-conf ssl.ca (and ssl.cert, ssl.key)"
            )
        mode = _jdbc_mode(jdbc)
        if "debezium.database.ssl.mode" in conf:  # Debezium's name (verify_ca, ...) for the same modes
            mode = conf["debezium.database.ssl.mode"].strip().lower().replace("_", "-")
        if "ssl.mode" in conf:
            mode = conf["ssl.mode"].strip().lower().replace("_", "-")
        if mode not in MODES:
            raise ValueError(f"--mysql-conf ssl.mode '{mode}' is not one of {', '.join(MODES)}")
        ssl = SslSettings(mode, conf.get("ssl.ca") or None, conf.get("ssl.cert") or None, conf.get("ssl.key") or None)
        if mode.startswith("verify") and ssl.ca is None:
            raise ValueError(f"ssl.mode {mode} needs --mysql-conf ssl.ca=<CA certificate, PEM>")
        if (ssl.cert is None) != (ssl.key is None):
            raise ValueError("--mysql-conf ssl.cert and ssl.key go together (a client certificate and its key)")
        if mode == "disabled" and (ssl.ca or ssl.cert):
            raise ValueError("ssl.mode disabled cannot be combined with ssl.ca, ssl.cert or ssl.key")
        for option, path in (("ssl.ca", ssl.ca), ("ssl.cert", ssl.cert), ("ssl.key", ssl.key)):
            if path is not None and not Path(path).is_file():
                raise ValueError(f"--mysql-conf {option}: no file '{path}' (it must exist on the driver and executors)")
        return ssl

    def pymysql_kwargs(self) -> dict[str, Any]:
        """Arguments of ``pymysql.connect`` (pymysql's own default is ``preferred``)."""
        if self.mode == "disabled":
            return {"ssl_disabled": True}
        if self.mode == "preferred" and self.cert is None:
            return {}
        ssl: dict[str, Any] = {"verify_mode": self.mode.startswith("verify")}
        ssl["check_hostname"] = self.mode == "verify-identity"
        if self.ca is not None:
            ssl["ca"] = self.ca
        if self.cert is not None:
            ssl["cert"], ssl["key"] = self.cert, self.key
        return {"ssl": ssl}


def _jdbc_mode(jdbc: Mapping[str, str]) -> str:
    """Connector/J: ``sslMode`` wins; else ``useSSL=false`` disables, ``verifyServerCertificate``
    verifies the CA, ``requireSSL`` requires, and ``useSSL=true`` prefers."""
    if "sslMode" in jdbc:
        return jdbc["sslMode"].lower().replace("_", "-")
    if jdbc.get("useSSL", "").lower() == "false":
        return "disabled"
    if jdbc.get("verifyServerCertificate", "").lower() == "true":
        return "verify-ca"
    if jdbc.get("requireSSL", "").lower() == "true":
        return "required"
    return "preferred"


def applied_jdbc_properties() -> tuple[str, ...]:
    return ("sslMode", "useSSL", "requireSSL", "verifyServerCertificate")
