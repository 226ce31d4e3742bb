"""The compactor service (not built yet): post-turn adaptive compaction (envelope gate,
decision probe, rolling summarizer) appending through the sessions service."""
