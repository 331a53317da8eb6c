"""Where each key and value of a flow file stands (1-based line and column)."""

from __future__ import annotations

from dataclasses import dataclass, field

Path = tuple[str | int, ...]
Mark = tuple[int, int]


@dataclass(slots=True)
class Positions:
    """Line and column of every key and value, by their path from the document root.

    A mapping entry's *key* position is the key itself; its *value* position is
    where the value starts. A sequence item has the same position for both.
    ``block`` holds the paths of block scalars (``|`` and ``>``), whose text
    starts on the line after the indicator.
    """

    keys: dict[Path, Mark] = field(default_factory=dict)
    values: dict[Path, Mark] = field(default_factory=dict)
    block: set[Path] = field(default_factory=set)

    def key(self, path: Path) -> Mark:
        """Position of the key at ``path``, else of its nearest located parent."""
        return _nearest(self.keys, path)

    def value(self, path: Path) -> Mark:
        """Position of the value at ``path``, else of its nearest located parent's key."""
        if path in self.values:
            return self.values[path]
        return _nearest(self.keys, path)


def _nearest(table: dict[Path, Mark], path: Path) -> Mark:
    for end in range(len(path), -1, -1):
        mark = table.get(path[:end])
        if mark is not None:
            return mark
    return (1, 1)
