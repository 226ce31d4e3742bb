"""The agent service: research turns, over gRPC (``agent.v1``).

- ``research``: ADK's runner over a ``RemoteSessionService``
  (``services.sessions.remote_session_service``), the coordinator, the search pipeline with its
  deep-research checkpoints, the synthesizer, and the offline model (``docs/research.md``); its
  library tools search and read the index through the library service's client;
- ``online_literature``: the OpenAlex search tool.

``zocrates run`` starts it after the reranker, sessions and library services, whose addresses
it needs.
"""
