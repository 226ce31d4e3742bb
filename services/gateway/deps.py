"""Dependency aliases for the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from services.gateway.state import GatewayState

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"


def get_state(request: Request) -> GatewayState:
    state: GatewayState = request.app.state.gateway
    return state


State = Annotated[GatewayState, Depends(get_state)]
SessionId = Annotated[
    str,
    Path(
        pattern=SESSION_ID_PATTERN,
        description="Session id as returned by POST /sessions.",
        examples=["3f0c8a4e-5b1d-4c1e-9a55-0c1f2e3d4b5a"],
    ),
]
