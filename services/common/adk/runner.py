"""google-adk 2.13's runner internals the agent's chat service reads.

Kept apart from :mod:`services.common.adk.internals` because ``google.adk.runners`` loads the
whole agent stack, which only the agent needs.
"""

from __future__ import annotations

# The paused task agent's scope that a new user message would be routed to, if any.
from google.adk.runners import _find_active_task_scope

find_active_task_scope = _find_active_task_scope

__all__ = ["find_active_task_scope"]
