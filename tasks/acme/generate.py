"""Regenerate the Acme Analytics world's initial state: `python tasks/acme/generate.py [--out DIR] [--seed N] [--no-docs]`.

Writes DIR/*.sql, DIR/chat.yaml and DIR/workspace/ (default: tasks/acme/initial_state). Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from acmegen import expenses, finance, people, sales, sqlfiles, support  # noqa: E402
from acmegen.model import WorldData  # noqa: E402

SEED = 20250407


def build_world(seed: int = SEED) -> WorldData:
    """All tables, in dependency order, from one random stream."""
    w = WorldData(seed=seed, rng=random.Random(seed))
    for part in (people, sales, finance, expenses, support):
        part.build(w)
    return w


def write(out: Path, seed: int = SEED, docs: bool = True) -> list[Path]:
    w = build_world(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sqlfiles.render(w).items():
        path = out / name
        path.write_text(text)
        written.append(path)
    from acmegen import chat

    (out / "chat.yaml").write_text(chat.render(w))
    written.append(out / "chat.yaml")
    if docs:
        from acmegen import documents

        written += documents.write_all(w, out / "workspace")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=HERE / "initial_state")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--facts", action="store_true", help="print the facts rubrics rely on as JSON and exit"
    )
    parser.add_argument(
        "--no-docs", action="store_true", help="skip documents (needs openpyxl, python-docx, odfpy)"
    )
    args = parser.parse_args(argv)
    if args.facts:
        import json

        from acmegen import facts

        print(json.dumps(facts.collect(build_world(args.seed)), indent=1, default=str))
        return 0
    for path in write(args.out, args.seed, docs=not args.no_docs):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
