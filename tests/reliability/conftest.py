"""The real llama.cpp server and embedded model fixtures, shared with the integration tests."""

from tests.integration.conftest import embedded_backend, llama_server  # noqa: F401
