"""One TLS context per process for the connections to MySQL (#27)."""

from __future__ import annotations

from typing import Any

_connection_classes: list[type] = []


def connection_class() -> type:
    """pymysql's Connection, with one TLS context per set of TLS settings in this process: pymysql
    makes a context per connection (in its default ``preferred`` mode even for a server without TLS),
    and loading the system's CA paths took ~0.1 s of each snapshot chunk's task."""
    if not _connection_classes:
        import pymysql

        contexts: dict[str, Any] = {}

        class Connection(pymysql.connections.Connection):
            def _create_ssl_ctx(self, sslp: dict[str, Any]) -> Any:
                key = repr(sorted(sslp.items()))
                if key not in contexts:
                    contexts[key] = super()._create_ssl_ctx(sslp)
                return contexts[key]

        _connection_classes.append(Connection)
    return _connection_classes[0]
