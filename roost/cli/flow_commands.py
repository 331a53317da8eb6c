"""``roost validate`` and ``roost schema`` (placeholder until the flow-language work lands)."""
