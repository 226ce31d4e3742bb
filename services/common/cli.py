"""The entry-point frame every ``python -m services.<name>`` shares: ``--help`` that lists
the settings, logging set up once, settings read once."""

from __future__ import annotations

import argparse
from typing import TypeVar

from pydantic_settings import BaseSettings

from services.common.logs import setup_logging
from services.common.settings import CommonSettings, load_settings

S = TypeVar("S", bound=CommonSettings)


def settings_help(cls: type[BaseSettings]) -> str:
    lines = ["settings (environment variables):"]
    for name, field in cls.model_fields.items():
        default = field.default if field.default is not None else "-"
        required = " (required)" if field.is_required() else f" [default: {default}]"
        lines.append(f"  ZOCRATES_{name.upper()}{required}")
        if field.description:
            lines.append(f"      {field.description}")
    return "\n".join(lines)


def service_main(cls: type[S], service: str, doc: str | None) -> S:
    parser = argparse.ArgumentParser(
        prog=f"python -m services.{service}",
        description=(doc or "").strip(),
        epilog=settings_help(cls),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args()
    settings = load_settings(cls, service)
    setup_logging(level=settings.log_level, json_lines=settings.log_json)
    return settings
