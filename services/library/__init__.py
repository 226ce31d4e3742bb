"""The library service: the one owner of the library index (``<Zotero data dir>/zocrates-data/
library``), over gRPC (``library.v1``): reading Zotero, extracting text, chunking, the two-phase
index (keywords, then vectors), hybrid search, and what the research tools read (a paper's
table of contents, a section's or pages' text) (``docs/library.md``).

The gateway's ``/library`` routes, ``zocrates index`` and the agent's research tools reach it
through ``services.library.client``. ``zocrates run`` starts it after the reranker, whose
embeddings it needs.
"""
