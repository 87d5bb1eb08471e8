"""Hypothesis profiles for the fuzz tests (``test_fuzz.py``): ``ci`` (the default, in ``make test``)
runs a bounded number of examples per test, under a minute in all; ``fuzz`` (``make fuzz``:
``HYPOTHESIS_PROFILE=fuzz``) runs 100 times as many."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
# (no example database: CI and a fresh clone start alike; a failure prints its reproduction)
# Examples per mutation test (arbitrary-bytes tests run 4 times as many: they are cheap).
settings.register_profile("ci", max_examples=50, deadline=None, database=None, suppress_health_check=_CHECKS)
settings.register_profile("fuzz", max_examples=5_000, deadline=None, database=None, suppress_health_check=_CHECKS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
