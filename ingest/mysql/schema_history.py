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
from collections.abc import Callable, Collection, Mapping

import structlog

from ingest.mysql.binlog_position import file_created, position_problem, recreated_problem, server_identity
from ingest.mysql.client import (
    MySqlConnection,
    MySqlSourceError,
    binlog_files,
    lost_position,
    master_status,
    retrying,
)
from schema_evolution.ddl_targets import ddl_targets
from schema_evolution.mysql_ddl import apply_ddl
from schema_evolution.mysql_tables import Catalog, Changes, DdlError, TableDef
from schema_evolution.payloads import ddl_fields, previews_enabled
from sinks.state_files import matching, state_path, write_atomically

log = structlog.get_logger(__name__)

Position = tuple[str, int]

HISTORY_DIR = "lakecdc-mysql-schema"
SERVER_FILE = "lakecdc-mysql-server.json"  # the identity of the server whose binlog positions the offsets hold
_START = "start.json"


class SchemaHistory:
    def __init__(self, state_dir: str) -> None:
        self.dir = state_path(state_dir) / HISTORY_DIR

    def exists(self) -> bool:
        return (self.dir / _START).exists()

    def start(self, position: tuple[str, int], tables: Mapping[str, TableDef]) -> None:
        """The definitions at the job's first position (written once, by the driver)."""
        body = {"position": list(position), "tables": {n: d.to_json() for n, d in sorted(tables.items())}}
        write_atomically(self.dir / _START, json.dumps(body, sort_keys=True))

    def restart_at(self, position: tuple[str, int], tables: Mapping[str, TableDef]) -> None:
        """Starts the history anew at ``position`` with ``tables`` (a failover or a re-snapshot), once: a
        history that already starts there is kept. The entries after the old start are keyed by positions
        of a binlog that is gone; they go first, so a crash before the new start leaves nothing the old
        start could be read with."""
        start = self.dir / _START
        if start.exists() and json.loads(start.read_text())["position"] == list(position):
            return
        for path in matching(self.dir, "[0-9]*.json"):
            path.unlink()
        self.start(position, tables)

    def record(self, offset: int, position: tuple[str, int], changes: Changes) -> None:
        """The definitions a DDL at ``position`` (``offset``: its increasing number) left. Idempotent: an
        entry is keyed by its offset, and a replayed batch records the same changes at the same offsets
        (an entry already holding them is not written again)."""
        path = self.dir / f"{offset:020d}.json"
        text = json.dumps({"position": list(position), "changes": _changes_json(changes)}, sort_keys=True)
        if path.exists() and path.read_text() == text:
            return
        write_atomically(path, text)

    def record_marks(self, notes: list[str]) -> list[str]:
        """Records the DDL changes among a batch's mark notes (``history_mark``, left by the binlog read
        task; called by the driver before the batch's commit); the other notes (snapshot chunks' high
        watermarks), as they are."""
        others = []
        for note in notes:
            entry = json.loads(note).get(HISTORY_MARK) if note.startswith("{") else None
            if entry is None:
                others.append(note)
                continue
            changes = {n: None if d is None else TableDef.from_json(d) for n, d in entry["changes"].items()}
            self.record(int(entry["offset"]), (entry["position"][0], int(entry["position"][1])), changes)
        return others

    def as_of(self, offset: int) -> dict[str, TableDef]:
        """The definitions after every recorded DDL at or before ``offset``."""
        start = self.dir / _START
        if not start.exists():
            raise FileNotFoundError(
                f"{start} is missing: the schema history of this checkpoint is gone; start the job from a new "
                f"checkpoint (or set binlog_row_metadata=FULL on the server)"
            )
        tables = {n: TableDef.from_json(d) for n, d in json.loads(start.read_text())["tables"].items()}
        for path in matching(self.dir, "[0-9]*.json"):
            if int(path.stem) > offset:
                break
            for name, d in json.loads(path.read_text())["changes"].items():
                if d is None:
                    tables.pop(name, None)
                else:
                    tables[name] = TableDef.from_json(d)
        return tables


HISTORY_MARK = "schema_history"


def history_mark(offset: int, position: Position, changes: Changes) -> str:
    """A DDL's changes to the history as a read task's mark note: the driver records them
    (``SchemaHistory.record_marks``) before the batch's commit, read tasks never write the history."""
    entry = {"offset": offset, "position": list(position), "changes": _changes_json(changes)}
    return json.dumps({HISTORY_MARK: entry}, sort_keys=True)


def _changes_json(changes: Changes) -> dict[str, object]:
    return {n: None if d is None else d.to_json() for n, d in sorted(changes.items())}


def follow_ddl(
    definitions: Catalog,
    text: str,
    default_db: str | None,
    position: Position,
    database: Callable[[str], bool],
    captured: Callable[[str, str], bool],
    skip: Collection[Position] = (),
) -> Changes:
    """The changes a binlog statement makes to the history's definitions (tables of the followed
    ``database``s only). Its targets are read first: a statement about other databases is not
    parsed at all, one about tables of a followed database the job does not capture that cannot
    be parsed makes the history forget them, and only a captured table's DDL that cannot be
    followed raises ``DdlError`` (``unfollowed_ddl`` words the stop). Statements at the ``skip``
    positions (``scan.schema-history.skip-ddl``) are passed over, as the operator asked."""
    targets = ddl_targets(text, default_db)
    if targets is not None and not targets.touches(database):
        if targets.tables or targets.databases:
            log.debug("DDL outside the captured databases skipped", binlog=list(position), tables=targets.tables)
        return {}
    if tuple(position) in skip:
        log.warning("DDL skipped as scan.schema-history.skip-ddl asks", binlog=list(position), **ddl_fields(text))
        return {}
    try:
        changes = apply_ddl(definitions, text, default_db)
    except DdlError as exc:
        if targets is None or targets.touches(database, captured):
            raise
        # Only tables the job does not capture: their rows are never read, so the history may
        # forget them (a later rename into a captured name then stops the job, naming it).
        changes = {n: None for n in targets.tables if database(n.split(".", 1)[0])}
        log.warning(
            "DDL of tables the job does not capture cannot be parsed; the schema history forgets them",
            binlog=list(position), tables=list(changes), reason=str(exc),
        )  # fmt: skip
    return {n: d for n, d in changes.items() if database(n.split(".", 1)[0])}


def unfollowed_ddl(position: Position, text: str, reason: DdlError) -> MySqlSourceError:
    """The stop at a captured table's DDL the schema history cannot follow, with the ways forward."""
    where = f"{position[0]}:{position[1]}"
    if previews_enabled():  # --log-payloads: the statement itself
        statement = " ".join(text.split())
        statement = statement if len(statement) <= 300 else statement[:300] + " …"
        why = str(reason)
    else:
        fields = ddl_fields(text)
        statement = f"a statement of {fields['ddl_chars']} characters ({fields['ddl_kind']}; --log-payloads shows it)"
        why = _without_statement(str(reason))
    return MySqlSourceError(
        f"binlog {where}: the schema history cannot follow this DDL of a captured table ({why}): "
        f"{statement}\nThe server's row events do not name their columns (binlog_row_metadata is not FULL), "
        f"so lakecdc must follow every DDL of the captured tables. Ways forward, restarting from the same "
        f"checkpoint: (1) if the statement changed no column (partitioning, indexes, table options), pass "
        f"--mysql-conf scan.schema-history.skip-ddl={where}; (2) leave the table out (table-name, or "
        f"--excluding-tables) and the other tables go on. Otherwise start from a new checkpoint (a new "
        f"snapshot), after setting binlog_row_metadata=FULL on the server (MySQL 8.0.1+, MariaDB 10.5+) so "
        f"that DDL need not be parsed."
    )


def _without_statement(reason: str) -> str:
    """A ``DdlError``'s reason without the part of the statement it quotes ("cannot parse DDL: <text>",
    "cannot follow ALTER TABLE t … <clause>"); table and column names stay, they are schema."""
    if reason.startswith("cannot"):
        reason = reason.split(": ", 1)[0].split(" … ", 1)[0]
    return reason


def check_binlog_position(
    connection: MySqlConnection,
    state_dir: str,
    position: Position,
    server_id: int | None = None,
    fingerprinted: set[str] | None = None,
) -> None:
    """Stops with lakecdc's error when the checkpoint's ``position`` cannot be read on from
    (``client.position_problem``: another server, a purged file, a binlog that went backwards)
    instead of waiting forever for the server to pass it, or failing later with error 1236. The
    server's identity is noted beside the checkpoint the first time, and (given ``server_id``) the
    creation time of each binlog file the job reads from, once per file and run (``fingerprinted``
    holds the files checked in this run): a file made anew by RESET MASTER is refused even after
    it has grown past the position."""
    kept = state_path(state_dir) / SERVER_FILE
    state = json.loads(kept.read_text()) if kept.exists() else {}
    then: str | None = state.get("server")
    created: dict[str, int] = dict(state.get("files", {}))
    fresh = server_id is not None and fingerprinted is not None and position[0] not in fingerprinted

    def check(c: object) -> tuple[str | None, str]:
        # The server's end now, read after the checkpoint's position was planned: an --available-now
        # target read at start-up may be behind a position the snapshot's chunks already reached.
        now = server_identity(c)
        return position_problem(position, master_status(c), binlog_files(c), then, now), now

    problem, now = retrying(connection, check)
    created_now = None
    if problem is None and fresh:
        assert server_id is not None
        created_now = file_created(connection, server_id, position[0])
        problem = recreated_problem(position, created.get(position[0]), created_now)
    if problem is not None:
        raise lost_position(problem)
    if fresh:
        assert fingerprinted is not None
        fingerprinted.add(position[0])
    changed = then is None or (created_now is not None and created.get(position[0]) != created_now)
    if changed:
        if created_now is not None:
            created[position[0]] = created_now
        # the newest files' times are all a restart needs
        recent = dict(sorted(created.items(), key=lambda kv: _file_order(kv[0]))[-_KEPT_FILES:])
        write_atomically(kept, json.dumps({"server": now, "files": recent}))


_KEPT_FILES = 64


def _file_order(name: str) -> tuple[int, str]:
    digits = name.rsplit(".", 1)[-1]
    return (int(digits) if digits.isdigit() else -1, name)
