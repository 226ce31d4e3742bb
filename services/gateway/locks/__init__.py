"""The in-flight chat lock: one chat (or resume, rewind, compaction) per session at a time."""
