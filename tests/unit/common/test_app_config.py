"""zocrates_config.json: defaults written on first load, back-fill, validation, safe updates."""

from __future__ import annotations

import json
import pathlib
import threading

import pytest

from services.common.app_config import (
    CONFIG_FILE_NAME,
    ConfigError,
    ConfigStore,
    ZocratesConfig,
    config_from_json,
    config_reference,
)
from services.common.errors import InvalidArgument

DEFAULTS = {
    "session_retention_days": 180,
    "max_saved_sessions": 100,
    # Deep research (services/agent/research/harness.py).
    "hitl_enabled": True,
    "max_retrieval_tools": 10,
    "hard_word_ceiling": 7500,
    "max_rerank_chunks": 15,
    "extension_call_increment": 5,
    "extension_word_increment": 3750,
    "extension_chunk_increment": 5,
    "max_extensions": 2,
    "coordinator_model": "offline",
    "subagent_model": "offline",
    "synthesizer_model": "offline",
    "synthesizer_thinking": "high",
    "model_api_base": "",
    "model_tool_calling": "auto",
    "model_context_window": 0,
    "online_search_enabled": True,
    # Post-turn compaction (docs/compaction.md).
    "enable_adaptive_compaction": True,
    "compaction_summarizer_model": "offline",
    "adaptive_compaction_retention_turns": 2,
    "adaptive_compaction_min_turns": 4,
    "adaptive_compaction_token_floor": 30000,
    "adaptive_compaction_token_ceiling": 100000,
    "adaptive_compaction_threshold": 0.75,
    "adaptive_compaction_decision_model": "local",
}


def _on_disk(store: ConfigStore) -> dict:
    return json.loads(store.path.read_text(encoding="utf-8"))


def _temp_files(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_defaults_match_the_documented_values() -> None:
    assert ZocratesConfig().model_dump() == DEFAULTS
    assert {row[0]: row[2] for row in config_reference()} == DEFAULTS
    assert all(row[3] for row in config_reference())  # every key is documented


def test_first_load_writes_every_key_with_its_default(tmp_path: pathlib.Path) -> None:
    data_dir = tmp_path / "zocrates-data"  # does not exist yet
    store = ConfigStore(data_dir)
    config = store.load()
    assert config.model_dump() == DEFAULTS
    assert store.path == data_dir / CONFIG_FILE_NAME
    assert _on_disk(store) == DEFAULTS
    assert set(_on_disk(store)) == set(ZocratesConfig.model_fields)
    assert _temp_files(data_dir) == []


def test_load_is_stable_and_does_not_rewrite_a_complete_file(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.load()
    first = store.path.read_bytes()
    mtime = store.path.stat().st_mtime_ns
    assert store.load().model_dump() == DEFAULTS
    assert store.path.read_bytes() == first
    assert store.path.stat().st_mtime_ns == mtime


def test_missing_keys_back_filled_existing_values_kept(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.path.write_text(json.dumps({"max_saved_sessions": 7}), encoding="utf-8")
    config = store.load()
    assert config.max_saved_sessions == 7
    assert config.session_retention_days == 180
    assert _on_disk(store) == {**DEFAULTS, "max_saved_sessions": 7}


def test_empty_file_treated_as_defaults(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.path.write_text("", encoding="utf-8")
    assert store.load().model_dump() == DEFAULTS
    assert _on_disk(store) == DEFAULTS


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("max_saved_sessions", -1),
        ("max_saved_sessions", "abc"),
        ("session_retention_days", -5),
        ("session_retention_days", [30]),
        ("session_retention_days", 1.5),
    ],
)
def test_invalid_value_raises_and_leaves_file_untouched(
    tmp_path: pathlib.Path, key: str, bad: object
) -> None:
    store = ConfigStore(tmp_path)
    # Deliberately incomplete (the other key is missing): a failed load must not back-fill.
    original = json.dumps({key: bad, "future_key": 1}, indent=4).encode()
    store.path.write_bytes(original)
    with pytest.raises(ConfigError) as info:
        store.load()
    err = info.value
    assert isinstance(err, InvalidArgument)
    assert err.code == "invalid_config"
    assert err.http_status == 400
    assert key in err.message
    assert str(store.path) in err.message
    assert store.path.read_bytes() == original
    assert _temp_files(tmp_path) == []


def test_invalid_json_says_how_to_fix(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    original = b'{"max_saved_sessions": 10,,}'
    store.path.write_bytes(original)
    with pytest.raises(ConfigError) as info:
        store.load()
    message = info.value.message
    assert info.value.code == "invalid_config"
    assert str(store.path) in message
    assert "not valid JSON" in message
    assert "delete" in message.lower()
    assert "line 1" in message
    assert store.path.read_bytes() == original


def test_non_object_json_rejected(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        store.load()
    assert str(store.path) in info.value.message
    assert store.path.read_text(encoding="utf-8") == "[1, 2]"


def test_unknown_keys_preserved_on_load(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.path.write_text(
        json.dumps({"from_a_newer_version": {"nested": True}, "session_retention_days": 30}),
        encoding="utf-8",
    )
    config = store.load()
    assert config.session_retention_days == 30
    assert not hasattr(config, "from_a_newer_version")
    assert _on_disk(store) == {
        **DEFAULTS,
        "from_a_newer_version": {"nested": True},
        "session_retention_days": 30,
    }


def test_unknown_keys_preserved_on_update(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.path.write_text(json.dumps({"future": "x"}), encoding="utf-8")
    store.update({"max_saved_sessions": 3})
    assert _on_disk(store) == {**DEFAULTS, "max_saved_sessions": 3, "future": "x"}


def test_update_with_unknown_key_is_refused(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    store.load()
    before = store.path.read_bytes()
    with pytest.raises(ConfigError) as info:
        store.update({"max_saved_sessions": 5, "max_sessions": 5})
    err = info.value
    assert err.code == "unknown_setting"
    assert "max_sessions" in err.message
    for known in ZocratesConfig.model_fields:
        assert known in err.message
    assert store.path.read_bytes() == before


@pytest.mark.parametrize(
    "changes",
    [
        {"max_saved_sessions": -1, "session_retention_days": 9},
        {"max_saved_sessions": "abc", "session_retention_days": 9},
        {"max_saved_sessions": {"x": 1}, "session_retention_days": 9},
        # null is valid for the first key; the invalid sibling must block both.
        {"session_retention_days": None, "max_saved_sessions": -3},
    ],
)
def test_update_with_invalid_value_writes_nothing(tmp_path: pathlib.Path, changes: dict) -> None:
    store = ConfigStore(tmp_path)
    store.update({"max_saved_sessions": 42})
    before = store.path.read_bytes()
    with pytest.raises(ConfigError) as info:
        store.update(changes)
    assert info.value.code == "invalid_config"
    assert "max_saved_sessions" in info.value.message
    assert store.path.read_bytes() == before
    assert store.load().model_dump() == {**DEFAULTS, "max_saved_sessions": 42}
    assert _temp_files(tmp_path) == []


def test_an_unknown_thinking_setting_is_refused_with_the_known_ones(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    with pytest.raises(ConfigError) as info:
        store.update({"synthesizer_thinking": "max"})
    assert info.value.code == "invalid_config"
    assert "synthesizer_thinking" in info.value.message
    assert all(v in info.value.message for v in ("'off'", "'low'", "'medium'", "'high'"))
    reference = {row[0]: row[1] for row in config_reference()}
    assert reference["synthesizer_thinking"] == "Literal['off', 'low', 'medium', 'high']"


def test_update_invalid_value_on_absent_file_creates_nothing(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    with pytest.raises(ConfigError):
        store.update({"max_saved_sessions": -1})
    assert not store.path.exists()


def test_update_refuses_to_overwrite_an_invalid_file(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    original = b'{"session_retention_days": "forever"}'
    store.path.write_bytes(original)
    with pytest.raises(ConfigError) as info:
        store.update({"max_saved_sessions": 1})
    assert "session_retention_days" in info.value.message
    assert store.path.read_bytes() == original


@pytest.mark.parametrize("value", [0, None])
@pytest.mark.parametrize("key", ["session_retention_days", "max_saved_sessions"])
def test_zero_and_null_accepted_for_retention_keys(
    tmp_path: pathlib.Path, key: str, value: int | None
) -> None:
    store = ConfigStore(tmp_path)
    updated = store.update({key: value})
    assert getattr(updated, key) == value
    assert _on_disk(store)[key] == value
    assert getattr(ConfigStore(tmp_path).load(), key) == value

    other = tmp_path / "by-hand"
    other.mkdir()
    hand = ConfigStore(other)
    hand.path.write_text(json.dumps({key: value}), encoding="utf-8")
    assert getattr(hand.load(), key) == value
    assert _on_disk(hand)[key] == value


def test_update_returns_and_persists_new_values(tmp_path: pathlib.Path) -> None:
    store = ConfigStore(tmp_path)
    result = store.update({"session_retention_days": 30})
    assert result.model_dump() == {**DEFAULTS, "session_retention_days": 30}
    result = store.update({"max_saved_sessions": 12})
    expected = {**DEFAULTS, "session_retention_days": 30, "max_saved_sessions": 12}
    assert result.model_dump() == expected
    assert _on_disk(store) == expected
    assert store.path.read_text(encoding="utf-8").endswith("\n")


def test_concurrent_updates_from_threads_and_two_stores_all_land(tmp_path: pathlib.Path) -> None:
    first = ConfigStore(tmp_path)
    second = ConfigStore(tmp_path)  # another instance on the same folder (another process)
    rounds = 25
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(store: ConfigStore, key: str, offset: int) -> None:
        try:
            start.wait()
            for i in range(rounds):
                store.update({key: offset + i})
                # Reads interleave with the other writers; never see a torn file.
                assert set(_on_disk(store)) == set(DEFAULTS)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(first, "session_retention_days", 1000)),
        threading.Thread(target=worker, args=(second, "max_saved_sessions", 2000)),
        threading.Thread(target=worker, args=(first, "max_saved_sessions", 2000)),
        threading.Thread(target=worker, args=(second, "session_retention_days", 1000)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    final = _on_disk(first)
    assert final == {
        **DEFAULTS,
        "session_retention_days": 1000 + rounds - 1,
        "max_saved_sessions": 2000 + rounds - 1,
    }
    assert ConfigStore(tmp_path).load().model_dump() == final
    assert _temp_files(tmp_path) == []


def test_alternating_keys_no_lost_update(tmp_path: pathlib.Path) -> None:
    """Each thread owns one key; a lost update would revert the other key's last value."""
    stores = [ConfigStore(tmp_path), ConfigStore(tmp_path)]
    stores[0].load()
    done = threading.Barrier(2)
    last: dict[str, int] = {}

    def worker(idx: int) -> None:
        key = ("session_retention_days", "max_saved_sessions")[idx]
        done.wait()
        for i in range(40):
            value = idx * 10_000 + i
            stores[idx].update({key: value})
            last[key] = value

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert last == {"session_retention_days": 39, "max_saved_sessions": 10_039}
    assert _on_disk(stores[0]) == {**DEFAULTS, **last}
    assert _temp_files(tmp_path) == []


def test_a_search_harness_block_is_applied_and_moved_to_the_top_level(
    tmp_path: pathlib.Path,
) -> None:
    """The specification's shape: an existing file (every key back-filled) gets a block."""
    store = ConfigStore(tmp_path)
    store.load()
    path = tmp_path / CONFIG_FILE_NAME
    raw = json.loads(path.read_text())
    raw["search_harness"] = {"max_retrieval_tools": 4, "hard_word_ceiling": 2000,
                             "max_rerank_chunks": 8, "budget_increment": 2}  # fmt: skip
    path.write_text(json.dumps(raw))
    config = store.load()
    assert (config.max_retrieval_tools, config.hard_word_ceiling) == (4, 2000)
    assert (config.max_rerank_chunks, config.extension_call_increment) == (8, 2)
    on_disk = json.loads(path.read_text())
    assert "search_harness" not in on_disk and on_disk["max_retrieval_tools"] == 4
    assert store.load() == config  # stable once moved


@pytest.mark.parametrize(
    ("block", "code", "words"),
    [
        ({"max_tools": 4}, "unknown_setting", "search_harness has unknown key(s) max_tools"),
        ([10, 7500, 15], "invalid_config", "search_harness must be a JSON object"),
        ({"max_retrieval_tools": 0}, "invalid_config", "max_retrieval_tools"),
    ],
)
def test_a_search_harness_block_it_cannot_apply_is_refused_by_name(
    tmp_path: pathlib.Path, block: object, code: str, words: str
) -> None:
    path = tmp_path / CONFIG_FILE_NAME
    text = json.dumps({"search_harness": block})
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        ConfigStore(tmp_path).load()
    assert exc.value.code == code and words in str(exc.value)
    assert path.read_text() == text  # nothing written


def test_update_takes_a_search_harness_block_as_its_keys(tmp_path: pathlib.Path) -> None:
    updated = ConfigStore(tmp_path).update({"search_harness": {"max_rerank_chunks": 20}})
    assert updated.max_rerank_chunks == 20
    assert "search_harness" not in json.loads((tmp_path / CONFIG_FILE_NAME).read_text())


def test_settings_sent_with_a_request_validate_like_the_file() -> None:
    config = ZocratesConfig(max_retrieval_tools=3, synthesizer_model="openai/x")
    assert config_from_json(config.model_dump_json()) == config
    assert config_from_json('{"search_harness": {"max_extensions": 1}}').max_extensions == 1
    with pytest.raises(ConfigError, match="config_json: max_retrieval_tools"):
        config_from_json('{"max_retrieval_tools": -1}')
    with pytest.raises(ConfigError, match="JSON object"):
        config_from_json("[1]")
