"""The compactor service: post-turn adaptive compaction (``docs/compaction.md``).

Domain modules (no gRPC, no I/O of their own):

- ``turns``: completed turns, the live compaction, coordinator prompt tokens and the serial
  dialogue the decision model reads, all from session events after rewinds;
- ``gate``: the envelope gate, the sub-millisecond fast path (skip / force / probe);
- ``decision``: the ``Decision`` type and the Decisions API probe (``DecisionsApiClient``);
  ``local_decision``: the built-in ``LocalDecisionModel`` (embeddings plus cues);
- ``summarizer``: the rolling-consolidation plan, the extractive and model summarizers, and
  the compaction event ADK's prompt assembly reads;
- ``engine``: one post-turn evaluation, gate to event;
- ``service``: ``Compactor``, which loads the session, runs the engine inside the spans and
  appends the event through the sessions service (``servicer`` only translates the proto).
"""
