"""The schema history of a MySQL binlog reader on a server without ``binlog_row_metadata=FULL``:
table definitions as of the job's first binlog position, then one file per DDL that changed a
tracked table, beside the checkpoint (``<checkpoint>/lakecdc-mysql-schema/``).

A binlog task rebuilds the definitions as of its start position from these files, applies the
DDLs it meets (recording each), and names and types row values by those definitions, so a reader
far behind several ALTERs attaches every value to the column it belonged to when written. Files
are named by binlog position and written atomically: a replayed micro-batch writes the same files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from schema_evolution.mysql_tables import Changes, TableDef
from sinks.local_files import write_atomically

HISTORY_DIR = "lakecdc-mysql-schema"
_START = "start.json"


class SchemaHistory:
    def __init__(self, state_dir: str) -> None:
        self.dir = Path(state_dir) / HISTORY_DIR

    def exists(self) -> bool:
        return (self.dir / _START).exists()

    def start(self, position: tuple[str, int], tables: Mapping[str, TableDef]) -> None:
        """The definitions at the job's first position (written once, by the driver)."""
        body = {"position": list(position), "tables": {n: d.to_json() for n, d in sorted(tables.items())}}
        write_atomically(self.dir / _START, json.dumps(body, sort_keys=True))

    def record(self, offset: int, position: tuple[str, int], changes: Changes) -> None:
        """The definitions a DDL at ``position`` (``offset``: its increasing number) left."""
        body = {
            "position": list(position),
            "changes": {n: None if d is None else d.to_json() for n, d in sorted(changes.items())},
        }
        write_atomically(self.dir / f"{offset:020d}.json", json.dumps(body, sort_keys=True))

    def as_of(self, offset: int) -> dict[str, TableDef]:
        """The definitions after every recorded DDL at or before ``offset``."""
        start = self.dir / _START
        if not start.exists():
            raise FileNotFoundError(
                f"{start} is missing: the schema history of this checkpoint is gone; start the job from a new "
                f"checkpoint (or set binlog_row_metadata=FULL on the server)"
            )
        tables = {n: TableDef.from_json(d) for n, d in json.loads(start.read_text())["tables"].items()}
        for path in sorted(self.dir.glob("[0-9]*.json")):
            if int(path.stem) > offset:
                break
            for name, d in json.loads(path.read_text())["changes"].items():
                if d is None:
                    tables.pop(name, None)
                else:
                    tables[name] = TableDef.from_json(d)
        return tables
