"""A stand-in for NumPy on test_cli_python's PYTHONPATH: importing it fails as a missing NumPy's
import does, so that a Python without NumPy can be tested where NumPy is installed."""

raise ModuleNotFoundError("No module named 'numpy'", name="numpy")
