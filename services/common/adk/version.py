"""The google-adk version this package was written against, and the start-up check.

The pin itself is ``google-adk==2.13.0`` in ``pyproject.toml`` (and
``requirements/constraints.txt``); ``tests/unit/common/test_adk_version.py`` keeps
:data:`PINNED_ADK_VERSION` equal to it. The check reads the installed distribution's metadata
(no ADK import, a few milliseconds) once per process.
"""

from __future__ import annotations

import functools
from importlib import metadata

PINNED_ADK_VERSION = "2.13.0"
DISTRIBUTION = "google-adk"


class AdkVersionError(RuntimeError):
    """The installed google-adk is not the version ``services/common/adk`` was written for."""


def installed_adk_version() -> str | None:
    """The installed google-adk's version, or None when it is not installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def check_adk_version(*, expected: str = PINNED_ADK_VERSION, found: str | None = None) -> None:
    """Stop unless the installed google-adk is ``expected``.

    Args:
        expected: the pinned version.
        found: the installed version; read from the package metadata when omitted.

    Raises:
        AdkVersionError: naming both versions, when they differ or ADK is not installed.
    """
    if found is None:
        found = _installed()
    if found == expected:
        return
    raise AdkVersionError(
        f"Zocrates needs google-adk {expected} (pinned in pyproject.toml), found "
        f"{found or 'none installed'}: services/common/adk relies on that version's private "
        "modules. Reinstall the pinned dependencies (make venv), or port services/common/adk "
        "to the new version and move the pin."
    )


@functools.cache
def _installed() -> str | None:
    return installed_adk_version()
