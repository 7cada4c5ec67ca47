"""Test-only Python plugin (test_cli_python) whose import fails: ggfuzz refuses it cleanly."""

raise RuntimeError("this plugin cannot be imported")
