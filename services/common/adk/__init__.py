"""Everything Zocrates takes from google-adk's internals, and the session-event contract.

google-adk 2.13 keeps several things the services need in private modules and attributes
(rewinds, abort sealing, open interrupts, compaction ranges, the finish-task tool, the runner's
active task scope, a prompt-assembly filter). This package is the only code that imports them
(``make lint`` runs ``scripts/check_imports.py``, which refuses a private ``google.adk`` import
anywhere else), so an ADK upgrade breaks here, in one place:

- :mod:`.version`: the pinned ADK version and the check below;
- :mod:`.internals`: ADK's private event-level names under public aliases (every service);
- :mod:`.runner`: the runner's active task scope (the agent);
- :mod:`.compat`: the prompt-assembly patch and ADK's own prompt assembly (the agent, tests);
- :mod:`.names`: the names more than one service reads from a session (tools, authors, keys);
- :mod:`.history`: which events of a session are live, and its pending checkpoint.

Importing any of them first runs :func:`.version.check_adk_version`: a process on another ADK
version stops with one message naming the pinned and the installed version, before a private
import could fail with a bare ``ImportError`` (or, worse, import something that changed).
"""

from services.common.adk.version import check_adk_version

check_adk_version()
