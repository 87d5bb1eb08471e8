"""GTID sets (``scan.startup.specific-offset.gtid-set``): the transactions a reader has already
processed, in MySQL's form (``3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,…``) or MariaDB's
(``0-1-100,1-2-5``: per replication domain, the last sequence number applied). The reader starts
at the first transaction of the binlog the set does not contain."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MARIADB = re.compile(r"^\s*\d+-\d+-\d+\s*(,\s*\d+-\d+-\d+\s*)*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


@dataclass(frozen=True, slots=True)
class GtidSet:
    mariadb: dict[int, int] = field(default_factory=dict)  # domain -> last applied sequence number
    mysql: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # uuid -> [lo, hi] ranges

    @staticmethod
    def parse(text: str) -> GtidSet:
        text = text.strip()
        if not text:
            raise ValueError("scan.startup.specific-offset.gtid-set is empty")
        if _MARIADB.match(text):
            domains: dict[int, int] = {}
            for part in text.split(","):
                domain, _server, seq = (int(x) for x in part.strip().split("-"))
                domains[domain] = max(seq, domains.get(domain, 0))
            return GtidSet(mariadb=domains)
        sets: dict[str, tuple[tuple[int, int], ...]] = {}
        for part in text.replace("\n", "").split(","):
            pieces = part.strip().split(":")
            uuid = pieces[0].lower().replace("-", "")
            if not _UUID.match(pieces[0].strip()) or len(pieces) < 2:
                raise ValueError(
                    f"scan.startup.specific-offset.gtid-set '{text}': '{part.strip()}' is neither a MySQL GTID "
                    f"set (uuid:1-5:7) nor MariaDB's (domain-server-sequence)"
                )
            ranges = []
            for interval in pieces[1:]:
                lo, _, hi = interval.partition("-")
                if not lo.strip().isdigit() or (hi and not hi.strip().isdigit()):
                    raise ValueError(f"scan.startup.specific-offset.gtid-set: bad interval '{interval}'")
                ranges.append((int(lo), int(hi or lo)))
            sets[uuid] = tuple(sorted(sets.get(uuid, ()) + tuple(ranges)))
        return GtidSet(mysql=sets)

    def contains(self, gtid: str) -> bool:
        """Whether the transaction ``gtid`` ("0-1-12" or "uuid:12") is in the set."""
        if ":" in gtid:
            uuid, _, number = gtid.rpartition(":")
            n = int(number)
            return any(lo <= n <= hi for lo, hi in self.mysql.get(uuid.lower().replace("-", ""), ()))
        domain, _server, seq = (int(x) for x in gtid.split("-"))
        return domain in self.mariadb and seq <= self.mariadb[domain]

    @staticmethod
    def of(text: str) -> GtidSet:
        """``parse``, where an empty text is the empty set (a server that has executed nothing yet)."""
        return GtidSet() if not text.strip() else GtidSet.parse(text)

    def covers(self, other: GtidSet) -> bool:
        """Whether every transaction of ``other`` is in this set (MariaDB: per domain, the sequence
        numbers up to the last one applied)."""
        if any(self.mariadb.get(domain, -1) < seq for domain, seq in other.mariadb.items()):
            return False
        for uuid, ranges in other.mysql.items():
            mine = self.mysql.get(uuid, ())
            for lo, hi in ranges:
                n = lo
                while n <= hi:  # walk the other range through this set's (sorted) ranges
                    reach = next((h for lo2, h in mine if lo2 <= n <= h), None)
                    if reach is None:
                        return False
                    n = reach + 1
        return True
