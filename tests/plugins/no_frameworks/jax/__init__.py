"""Stands in for jax in test_cli_python: importing it fails, so a plugin that imports jax
at module import cannot be listed."""

raise ImportError("jax is not importable in this test (tests/plugins/no_frameworks)")
