"""Stands in for torch in test_cli_python: importing it fails, so a plugin that imports torch
at module import cannot be listed."""

raise ImportError("torch is not importable in this test (tests/plugins/no_frameworks)")
