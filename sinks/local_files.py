"""Small state files kept beside a job's checkpoint (commit user, created tables, snapshot marks): written
through ``sinks.state_files``, which serves a local path (tmp + ``os.replace``) and object storage alike."""

from __future__ import annotations

from sinks.state_files import write_atomically

__all__ = ["write_atomically"]
