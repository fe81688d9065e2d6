"""``--out``: checked before any work, so a bad path fails fast instead of after the printing."""

from __future__ import annotations

import argparse
from pathlib import Path

#: Subcommands whose ``--out`` names a directory (created when missing; files in it replaced).
#: ``import``, ``join`` and ``sample`` write one table file there, replaced when it exists.
DIRECTORY_OUT = ("profile", "demo", "study", "simulate", "domains", "validate")


def check_out(args: argparse.Namespace) -> None:
    """Raise a clear error when ``--out`` of a directory-writing subcommand cannot be a directory.

    The directory may exist (its files of the same names are replaced) or not (it is created,
    parents included); it may not be an existing file, nor lie under one.
    """
    out = getattr(args, "out", None)
    if out is None or args.command not in DIRECTORY_OUT:
        return
    path = Path(out)
    for candidate in (path, *path.parents):
        if candidate.exists():
            if not candidate.is_dir():
                what = (
                    "it is an existing file"
                    if candidate == path
                    else f"'{candidate}' above it is an existing file"
                )
                raise ValueError(
                    f"--out '{path}' must be a directory for the {args.command} outputs, but "
                    f"{what}. Give a directory (created when missing; files of the same names in "
                    "it are replaced)."
                )
            return
