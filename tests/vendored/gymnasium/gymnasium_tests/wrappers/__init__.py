# Vendored from Farama-Foundation/Gymnasium 95a790e199c1ea7befa2fca03ac9fc42001c908d (v1.4.0), tests/wrappers/__init__.py (MIT licence: ../LICENSE).
# Changed: imports and module strings "tests." -> "gymnasium_tests."; nothing else.
"""Test suite for the wrappers."""
