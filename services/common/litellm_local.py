"""LiteLLM, imported once and configured to stay quiet and local.

Every service that touches LiteLLM (the models of the agent and the compactor, the price map)
imports it through :func:`import_litellm`, so its network look-ups are served from the copies
inside the wheel whoever imports it first: the model cost map and the Anthropic beta headers
would otherwise be fetched from GitHub at import, and DEV mode (LiteLLM's default) would load a
``.env`` from the working directory.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType

# Set before LiteLLM is first imported: it reads them at import or on first use. An operator's
# own value wins.
LITELLM_ENV_DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_MODE": "PRODUCTION",
}


@functools.cache
def import_litellm() -> ModuleType:
    """The ``litellm`` module, its local-only environment set before the first import.

    Slow the first time (seconds): call it from a thread where a loop must keep running.
    """
    for name, value in LITELLM_ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner on errors
    litellm.turn_off_message_logging = True  # callbacks never receive prompts or replies
    return litellm
