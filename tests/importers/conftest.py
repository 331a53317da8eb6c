"""The run page tests of imported runs share the visualize tests' headless Chromium."""

from tests.visualize.conftest import browser

__all__ = ["browser"]
