"""What the researcher wrote in Zotero, as the library service writes it into a passage and
the research turns read it back (services/library/own_reading.py, the offline answer)."""

from __future__ import annotations

# A highlight's passage: the highlighted text, a blank line, then this and the user's comment.
COMMENT_LEAD = "My comment: "
# An image annotation's passage: the comment, then this and the text inside its region.
REGION_LEAD = "The text in the marked region: "
