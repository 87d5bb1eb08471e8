"""The services of ``docker-compose.yml`` that feed the stack: a MySQL writer and a canal-json producer.

They run in the lakecdc image (``python -m deploy.compose.<module>``); the test suite runs the same
modules against its own MariaDB and broker (``tests/integration/test_compose_stack.py``)."""
