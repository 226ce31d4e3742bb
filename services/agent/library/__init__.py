"""The library index: reading Zotero, extracting text, chunking, hybrid search."""
