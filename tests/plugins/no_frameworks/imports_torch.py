"""A plugin that imports torch when it is imported: with tests/plugins/no_frameworks on the path
it cannot be loaded (test_cli_python checks that the stand-ins do stop an import)."""

import torch  # noqa: F401
