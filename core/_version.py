"""The one place the version is written; packaging reads it from here (pyproject `dynamic`)."""

__version__ = "0.2.0"
