"""The gateway keeps the config it read while the file is unchanged, and reads it again as soon
as anything else (another gateway, the user's editor, ``PUT /config``) replaced it."""

from __future__ import annotations

import json
import pathlib
from typing import Any

from services.common.app_config import ConfigStore
from services.gateway.config import GatewaySettings
from services.gateway.locks.in_memory_chat_lock import InMemoryChatLock
from services.gateway.state import GatewayState


def _state(data_dir: pathlib.Path) -> GatewayState:
    return GatewayState(
        settings=GatewaySettings.model_construct(),
        data_dir=data_dir,
        token="",
        sessions=None,  # type: ignore[arg-type]  # the config needs no peer
        agent=None,  # type: ignore[arg-type]
        library=None,  # type: ignore[arg-type]
        chat_lock=InMemoryChatLock(ttl_seconds=60),
        config_store=ConfigStore(data_dir),
    )


class CountingStore(ConfigStore):
    def __init__(self, data_dir: pathlib.Path) -> None:
        super().__init__(data_dir)
        self.reads = 0

    def load(self) -> Any:
        self.reads += 1
        return super().load()


async def test_the_config_is_read_once_while_the_file_is_unchanged(tmp_path: pathlib.Path) -> None:
    state = _state(tmp_path)
    store = state.config_store = CountingStore(tmp_path)
    first = await state.load_config()  # creates the file (back-filled): read again next time
    for _ in range(5):
        assert await state.load_config() == first
    assert store.reads == 2


async def test_a_change_by_another_process_is_seen_at_the_next_read(tmp_path: pathlib.Path) -> None:
    state = _state(tmp_path)
    assert (await state.load_config()).adaptive_compaction_min_turns == 4
    await state.load_config()
    # Another gateway's PUT /config: its own store, an atomic replace of the file.
    ConfigStore(tmp_path).update({"adaptive_compaction_min_turns": 6})
    assert (await state.load_config()).adaptive_compaction_min_turns == 6
    # The user's editor, writing in place.
    path = tmp_path / "zocrates_config.json"
    raw = json.loads(path.read_text())
    raw["adaptive_compaction_min_turns"] = 7
    path.write_text(json.dumps(raw, indent=4))
    assert (await state.load_config()).adaptive_compaction_min_turns == 7
    # A deleted file is read again (defaults back-filled), never served from memory.
    path.unlink()
    assert (await state.load_config()).adaptive_compaction_min_turns == 4
