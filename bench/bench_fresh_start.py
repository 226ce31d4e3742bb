"""From a fresh clone to a ready stack, as a new user meets the README's first command.

Clones this checkout's HEAD into a temporary folder, runs ``make run`` there (which creates
its own ``.venv`` with what running needs), and times it until the stack prints "Zocrates is
running"; then reports the virtualenv's size and whether any of the dev or torch stack came
with it, and stops the stack with Ctrl-C (SIGINT), timing that too. With ``--compare-dev``,
the same clone's ``.venv`` is then filled as ``make test`` fills it (the dev extras), for the
size a user paid before ``make run`` installed only the runtime.

    python bench/bench_fresh_start.py [--no-pip-cache] [--compare-dev]

``--no-pip-cache`` empties pip's cache for the run (PIP_NO_CACHE_DIR): every wheel is
downloaded, as on a new machine. Network needed: PyPI. Goals (``--check``, docs/benchmarks.md):
ready within 180 s of the clone, a run venv of at most 1,000 MB with none of the dev or torch
stack in it.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from goals import Goal, add_check_flag, report

READY = "Zocrates is running"
DEV_ONLY = ("torch", "sentence-transformers", "pytest", "ruff", "mypy")


def _size_mb(path: pathlib.Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with_path = pathlib.Path(dirpath, name)
            if not with_path.is_symlink():
                total += with_path.stat().st_size
    return total / 1e6


def _installed(venv: pathlib.Path) -> set[str]:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    return {line.split("==", 1)[0] for line in out.splitlines()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-pip-cache", action="store_true", help="download every wheel")
    parser.add_argument("--compare-dev", action="store_true", help="also measure the dev venv")
    parser.add_argument("--port", type=int, default=19765, help="base port of the stack")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for ready")
    add_check_flag(parser)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="zocrates-fresh-") as tmp:
        clone = pathlib.Path(tmp, "zocrates")
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {
            **os.environ,
            "ZOCRATES_PORT": str(args.port),
            "ZOCRATES_ZOTERO_DIR": str(pathlib.Path(tmp, "Zotero")),
        }
        env.pop("VIRTUAL_ENV", None)
        if args.no_pip_cache:
            env["PIP_NO_CACHE_DIR"] = "1"
        log = pathlib.Path(tmp, "run.log")
        started = time.monotonic()
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                ["make", "--no-print-directory", "run"],
                cwd=clone,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            while READY not in log.read_text(errors="replace"):
                if proc.poll() is not None:
                    print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
                    raise SystemExit("make run exited before the stack was ready")
                if time.monotonic() - started > args.timeout:
                    raise SystemExit(f"not ready after {args.timeout:.0f} s")
                time.sleep(0.25)
            ready = time.monotonic() - started
        finally:
            stopping = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=60)
            stopped = time.monotonic() - stopping
        venv = clone / ".venv"
        names = _installed(venv)
        run_mb = _size_mb(venv)
        dev = sorted(names & set(DEV_ONLY))
        print(f"fresh clone -> '{READY}': {ready:.1f} s (pip cache: {not args.no_pip_cache})")
        print(f"stopped by Ctrl-C in {stopped:.1f} s")
        print(f"run venv: {run_mb:.0f} MB, {len(names)} packages")
        print(f"dev/torch packages in it: {dev or 'none'}", flush=True)
        if args.compare_dev:
            began = time.monotonic()
            subprocess.run(
                ["make", "--no-print-directory", "venv"],
                cwd=clone,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            print(
                f"after make venv (what make test installs): {_size_mb(venv):.0f} MB, "
                f"+{time.monotonic() - began:.0f} s"
            )
    return report(
        [
            (Goal("fresh clone to a ready stack", 180, " s"), ready),
            (Goal("the run venv", 1000, " MB"), run_mb),
            (Goal("dev or torch packages in the run venv", 0), float(len(dev))),
        ],
        check=args.check,
    )


if __name__ == "__main__":
    raise SystemExit(main())
