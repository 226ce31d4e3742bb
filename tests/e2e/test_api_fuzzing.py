"""Property-based fuzzing of the gateway's OpenAPI (issue 16, "Hostile input"): schemathesis
generates requests for every operation from the schema the gateway publishes, valid and not,
and sends them to `zocrates run` (every service its own process, the offline model). No
response may be a 5xx, and every response must match the schema: its status code is one the
operation documents, its body the documented model.

Examples per operation are bounded (``FUZZ_EXAMPLES``, default 25) to keep CI short; set it
higher to search longer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import hypothesis
import pytest
import schemathesis
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import zocrates_run

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("fuzz")
    zotero = zf.build_zotero_library(root / "Zotero", files=["lme4__lmer.pdf"])
    base = free_base_port()
    env = {"ZOCRATES_PORT": str(base), "ZOCRATES_ZOTERO_DIR": str(zotero)}
    log_path = root / "stack.log"
    try:
        with zocrates_run(env, log=log_path):
            token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
            yield f"http://127.0.0.1:{base}", {"Authorization": f"Bearer {token}"}
    finally:
        errors = [
            line
            for line in log_path.read_text(errors="replace").splitlines()
            if "Traceback" in line or " ERROR " in line
        ]
        print("\n".join(errors[:40]))


def test_no_5xx_and_no_schema_violation_on_any_operation(
    gateway: tuple[str, dict[str, str]],
) -> None:
    url, headers = gateway
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, [o.label for o in operations]
    failures: list[str] = []
    tried = 0
    for operation in operations:

        @hypothesis.given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(hypothesis.HealthCheck),
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        )
        def fuzz(case: schemathesis.Case) -> None:
            nonlocal tried
            tried += 1
            response = case.call(headers=headers, timeout=60)
            try:
                case.validate_response(response, checks=CHECKS)
            except (Exception, BaseExceptionGroup) as exc:  # every operation's faults, at once
                failures.append(f"{case.operation.label}: {type(exc).__name__}: {exc}"[:1500])

        fuzz()
    print(f"{tried} requests over {len(operations)} operations")
    assert failures == [], "\n\n".join(failures[:10])
