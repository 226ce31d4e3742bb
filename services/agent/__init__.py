"""The agent service: the library index and research turns, over gRPC (``agent.v1``).

- ``library``: reading Zotero, text, chunks, the two-phase index and hybrid search
  (``docs/library.md``);
- ``research``: ADK's runner over a ``RemoteSessionService``
  (``services.sessions.remote_session_service``), the coordinator, the search pipeline with its
  deep-research checkpoints, the synthesizer, and the offline model (``docs/research.md``);
- ``online_literature``: the OpenAlex search tool.

``zocrates run`` starts it after the reranker and sessions services, whose addresses it needs.
"""
