"""The gateway's bearer token, the loopback Host check and the Origin check.

The token is generated on first start into ``<data dir>/gateway.token`` with mode 0600; the
Zotero plugin reads it from there. It is compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
import logging
import os
import pathlib
import secrets

logger = logging.getLogger(__name__)

TOKEN_FILE_NAME = "gateway.token"


def ensure_token_file(data_dir: pathlib.Path, token: str | None = None) -> str:
    """Return the token in ``data_dir/gateway.token``, creating it (0600) if missing.

    With ``token`` given (a deployment's secret, or the token carried over by /register), the
    file is written with it when absent.
    """
    path = data_dir / TOKEN_FILE_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            logger.warning("%s was readable by others (mode %o); setting 0600", path, mode)
            path.chmod(0o600)
        existing = path.read_text(encoding="utf-8").strip()
        if existing and (token is None or existing == token):
            return existing
    value = token or secrets.token_urlsafe(32)
    tmp = path.with_name(f".{TOKEN_FILE_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (value + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    logger.info("gateway token written to %s", path)
    return value


def token_matches(presented: str, expected: str) -> bool:
    return hmac.compare_digest(presented.encode(), expected.encode())


def host_allowed(host_header: str | None, allowed: list[str]) -> bool:
    """Whether the Host header (with or without port) names an allowed host."""
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8765
        name = host.split("]", 1)[0] + "]"
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in {h.lower() for h in allowed}


# Origins of privileged code (Zotero's own windows and add-ons: the plugin's requests), never of
# a web page.
PRIVILEGED_ORIGIN_SCHEMES = frozenset({"chrome", "moz-extension", "resource", "zotero"})


def origin_allowed(origin: str | None, allowed: list[str]) -> bool:
    """Whether a request with this ``Origin`` header may be served.

    No Origin (a non-browser client) passes, as do Zotero's privileged schemes and the opaque
    origin ``null`` (what privileged or file:// code may send; such a request still needs the
    token). A web page's origin (``https://evil.example``) passes only when the deployment
    listed it (``ZOCRATES_ALLOWED_ORIGINS``): a page that obtained the token cannot use it
    from a browser.
    """
    if origin is None:
        return True
    value = origin.strip().lower().rstrip("/")
    if value == "null" or value in {a.strip().lower().rstrip("/") for a in allowed}:
        return True
    scheme, sep, _ = value.partition("://")
    return bool(sep) and scheme in PRIVILEGED_ORIGIN_SCHEMES
