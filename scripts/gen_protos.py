"""Generate Python gRPC code from protos/ into protos/gen (the `zocrates` package).

Usage: python scripts/gen_protos.py [--out DIR]

`make protos` runs this; `make protos-check` generates into a temporary folder and fails if
the committed code drifted from the .proto sources.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

from grpc_tools import protoc

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "protos"


def generate(out: pathlib.Path) -> None:
    protos = sorted(p.relative_to(SRC) for p in (SRC / "zocrates").rglob("*.proto"))
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    include = pathlib.Path(protoc.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{SRC}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *map(str, protos),
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed")
    # Make every generated folder a regular package so setuptools and mypy find it.
    for folder in [out / "zocrates", *(out / "zocrates").rglob("*")]:
        if folder.is_dir():
            (folder / "__init__.py").touch()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, default=SRC / "gen")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    main()
