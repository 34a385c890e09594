"""Test support: the mock provider server (``py_agent.testing.mock_server``)."""
