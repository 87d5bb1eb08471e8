"""``python -m ingest`` is the ``lakecdc`` command."""

import sys

from ingest.cli.main import main

sys.exit(main())
