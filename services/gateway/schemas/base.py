"""What every successful JSON body starts with."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Success(BaseModel):
    """``{"status": "success"}``, the first key of every successful body. A body that spreads
    another model's fields after it inherits ``(Other, Success)``: pydantic orders fields from
    the last base to the first, so ``status`` still comes first."""

    status: Literal["success"]
