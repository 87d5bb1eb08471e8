"""Secrets from the environment or files instead of the command line (README, Secrets).

Any ``--mysql-conf``, ``--kafka-conf`` or ``--catalog-conf`` value may hold references in Kafka
Connect's config-provider spelling, resolved once at start-up on the driver:

- ``${env:NAME}``: the environment variable ``NAME``;
- ``${file:/path}``: the whole content of the file ``/path``, without its trailing line break.

A reference may stand for the whole value (``password=${env:MYSQL_PASSWORD}``) or a part of it
(``properties.sasl.jaas.config=... password="${file:/run/secrets/kafka}";``). A missing variable or
unreadable file stops the job at start-up with an error that names the option and the variable or
file, never a value. Every resolved value, and every value of an option whose name marks a secret
(``ingest.logs.is_secret_name``), is registered with the log redaction (``ingest.logs``)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ingest import logs

REFERENCE = re.compile(r"\$\{(env|file):([^}]*)\}")


class SecretEnvironment(BaseSettings):
    """Secrets from dedicated ``LAKECDC_*`` environment variables, for the common cases; any other secret
    is a reference in its option's value."""

    model_config = SettingsConfigDict(env_prefix="LAKECDC_", frozen=True, extra="ignore")

    mysql_password: SecretStr | None = Field(
        None, description="LAKECDC_MYSQL_PASSWORD: the MySQL password when --mysql-conf has no password(-file)"
    )
    kafka_sasl_password: SecretStr | None = Field(
        None,
        description="LAKECDC_KAFKA_SASL_PASSWORD: properties.sasl.password when --kafka-conf has neither it nor "
        "properties.sasl.jaas.config",
    )


def resolve_conf(conf: Mapping[str, str], flag: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``conf`` with its ``${env:...}`` / ``${file:...}`` references replaced; raises ``ValueError``
    naming ``flag`` and the key."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for key, value in conf.items():
        resolved = REFERENCE.sub(_resolver(f"{flag} {key}", env), value)
        if logs.is_secret_name(key):
            logs.register_secret(resolved)
        out[key] = resolved
    return out


def _resolver(option: str, env: Mapping[str, str]) -> Callable[[re.Match[str]], str]:
    return lambda m: _lookup(m.group(1), m.group(2), option, env)


def _lookup(kind: str, name: str, option: str, env: Mapping[str, str]) -> str:
    name = name.strip()
    if not name:
        raise ValueError(f"{option}: ${{{kind}:}} names no {'variable' if kind == 'env' else 'file'}")
    if kind == "env":
        if name not in env:
            raise ValueError(f"{option}: environment variable {name} (${{env:{name}}}) is not set")
        value = env[name]
    else:
        try:
            with open(name, encoding="utf-8") as f:
                value = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise ValueError(f"{option}: cannot read {name} (${{file:{name}}}): {reason}") from None
        value = value.removesuffix("\n").removesuffix("\r")
    logs.register_secret(value)
    return value
