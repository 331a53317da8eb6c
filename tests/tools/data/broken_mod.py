"""A tool module that fails while importing."""

raise RuntimeError("this module is broken on purpose")
