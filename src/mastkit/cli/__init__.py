"""The ``mastkit`` command line: one module per verb group, each verb wrapping one library function."""
