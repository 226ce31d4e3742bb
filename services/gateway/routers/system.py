"""Health, registration of the Zotero data directory, and the user settings."""

from __future__ import annotations

import asyncio
import logging
import pathlib
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from services.common.app_config import ConfigStore, config_reference
from services.common.errors import Conflict, InvalidArgument
from services.common.settings import DATA_FOLDER_NAME
from services.gateway.auth import ensure_token_file
from services.gateway.deps import State
from services.gateway.errors import COMMON_ERRORS, PEER_ERRORS, error_responses
from services.gateway.schemas.system import ConfigBody, ConfigWithReference, Health, Registered

logger = logging.getLogger(__name__)
router = APIRouter(tags=["system"])


class RegisterBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    zotero_data_dir: str = Field(
        min_length=1,
        description="Zotero's data directory (Zotero.DataDirectory.dir), holding zotero.sqlite.",
    )


@router.get(
    "/healthz",
    summary="Liveness (no token needed)",
    response_model=Health,
    responses=error_responses(403, 500),
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.post(
    "/register",
    summary="Register the Zotero data directory and run start-up maintenance",
    response_model=Registered,
    responses=error_responses(
        *COMMON_ERRORS,
        *PEER_ERRORS,
        422,
        notes={
            400: (
                "`invalid_data_dir`: not an absolute path to an existing Zotero data "
                "directory (one holding zotero.sqlite), or its zocrates-data is a link or "
                "a file; nothing is created."
            ),
            409: (
                "`chat_in_progress`: chats are running; `data_dir_fixed`: the deployment "
                "fixed the database URL, so the directory cannot change."
            ),
        },
    ),
)
async def register(state: State, body: RegisterBody) -> dict[str, Any]:
    zotero_dir = _zotero_data_dir(body.zotero_data_dir, current=state.data_dir.parent)
    data_dir = zotero_dir / DATA_FOLDER_NAME
    changed = False
    if data_dir.resolve() != state.data_dir.resolve():
        if await state.chat_lock.locked_session_ids():
            raise Conflict(
                "Chats are running; register the new data directory when they have finished.",
                code="chat_in_progress",
            )
        _, changed = await state.sessions.use_data_dir(str(zotero_dir))
        # The plugin will read the token from the new place: carry the same token over.
        await asyncio.to_thread(ensure_token_file, data_dir, state.token)
        state.data_dir = data_dir
        state.config_store = ConfigStore(data_dir)
    report = await state.run_maintenance(reason="startup")
    state.last_startup_report = report
    state.startup_done.set()
    stats = await state.sessions.storage_stats()
    return {
        "status": "success",
        "zotero_data_dir": str(zotero_dir),
        "data_dir": str(state.data_dir),
        "sessions_db": stats["location"],
        "changed": changed,
        "zotero_sqlite_found": (zotero_dir / "zotero.sqlite").exists(),
        "maintenance": report,
    }


def _zotero_data_dir(raw: str, *, current: pathlib.Path) -> pathlib.Path:
    """The directory ``raw`` names, resolved, if it is a Zotero data directory the gateway may
    write ``zocrates-data`` into; else ``InvalidArgument`` (``invalid_data_dir``).

    A Zotero data directory holds ``zotero.sqlite`` as a regular file; its ``zocrates-data``,
    if there, is a directory of its own (not a link elsewhere). Symbolic links on the way are
    resolved first, so what is checked is what will be written to. The directory the gateway
    already runs on (the deployment's choice) is accepted as it is: nothing new is created.
    """
    try:
        path = pathlib.Path(raw).expanduser()
        absolute = path.is_absolute()
        resolved = path.resolve() if absolute else path
    except (ValueError, OSError, RuntimeError) as exc:  # a NUL byte, a link loop, no home
        raise InvalidArgument(
            f"zotero_data_dir is not a usable path ({exc}).", code="invalid_data_dir"
        ) from None
    if not absolute:
        raise InvalidArgument(
            f"zotero_data_dir must be an absolute path, got {raw!r}.", code="invalid_data_dir"
        )
    if not resolved.is_dir():
        raise InvalidArgument(
            f"{path} is not an existing directory. Pass Zotero's data directory "
            "(Zotero > Settings > Advanced > Files and Folders).",
            code="invalid_data_dir",
        )
    if resolved == current.resolve():
        return resolved
    database = resolved / "zotero.sqlite"
    if database.is_symlink() or not database.is_file():
        raise InvalidArgument(
            f"{path} is not a Zotero data directory: it has no zotero.sqlite. Pass the "
            "directory Zotero shows under Settings > Advanced > Files and Folders; nothing "
            "was created.",
            code="invalid_data_dir",
        )
    ours = resolved / DATA_FOLDER_NAME
    if ours.is_symlink() or (ours.exists() and not ours.is_dir()):
        raise InvalidArgument(
            f"{ours} is a link or a file, not Zocrates' own folder: the gateway will not write "
            "through it. Remove it and register again.",
            code="invalid_data_dir",
        )
    return resolved


@router.get(
    "/config",
    summary="The user settings (zocrates_config.json)",
    response_model=ConfigWithReference,
    responses=error_responses(
        *COMMON_ERRORS, notes={400: "`invalid_config`: the file on disk is not valid."}
    ),
)
async def get_config(state: State) -> dict[str, Any]:
    config = await state.load_config()
    return {
        "status": "success",
        "config": config.model_dump(),
        "path": str(state.config_store.path),
        "reference": [
            {"key": k, "type": t, "default": d, "description": desc}
            for k, t, d, desc in config_reference()
        ],
    }


@router.put(
    "/config",
    summary="Change some user settings; validated before anything is written",
    response_model=ConfigBody,
    responses=error_responses(
        *COMMON_ERRORS,
        422,
        notes={400: "`invalid_config` (a bad value) or `unknown_setting`; nothing is written."},
    ),
)
async def put_config(state: State, changes: dict[str, Any]) -> dict[str, Any]:
    config = await asyncio.to_thread(state.config_store.update, changes)
    return {"status": "success", "config": config.model_dump()}
