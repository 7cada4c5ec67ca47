"""Stands in for triton in test_cli_python: importing it fails, so a plugin that imports triton
at module import cannot be listed."""

raise ImportError("triton is not importable in this test (tests/plugins/no_frameworks)")
