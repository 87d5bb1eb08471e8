"""Integration tests start real servers on loopback: their fixtures (``kafka``, ``mariadb``, ``spark``,
``warehouse``, ``topic_name``) are in ``tests/servers.py``, registered by ``tests/conftest.py`` so the
Paimon compatibility suite's integration tests share them; ``tests/conftest.py`` marks every test
under a folder named ``integration`` with the ``integration`` marker."""
