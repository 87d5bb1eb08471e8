"""``python -m ingest`` is the ``lakecdc`` command."""

import sys

from ingest.cli import main

sys.exit(main())
