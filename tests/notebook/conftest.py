"""The notebook tests share the visualize tests' headless Chromium."""

from __future__ import annotations

from tests.visualize.conftest import browser

__all__ = ["browser"]
