"""``--out`` and ``--report``: checked before any work, so a path that cannot be written fails fast,
naming the option, instead of after the results were printed."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

#: Subcommands whose ``--out`` names a directory (created when missing; files in it replaced).
#: ``import``, ``join`` and ``sample`` write one table file there, replaced when it exists.
DIRECTORY_OUT = ("profile", "demo", "study", "simulate", "domains", "validate")


def check_out(args: argparse.Namespace) -> None:
    """Raise a clear error when ``--out`` or ``--report`` cannot be written.

    A directory ``--out`` may exist (its files of the same names are replaced) or not (it is
    created, parents included); it may not be an existing file, nor lie under one. A file
    (``--out`` of ``import``, ``join``, ``sample``, ``plan``; ``--report``) may not be an existing
    directory. In both cases the nearest existing folder must take a new file: that is tried with
    a temporary file, removed at once, so nothing is left behind when the check passes.
    """
    out = getattr(args, "out", None)
    if out is not None:
        _check_path(Path(out), "--out", args.command, directory=args.command in DIRECTORY_OUT)
    report = getattr(args, "report", None)
    if report is not None:
        _check_path(Path(report), "--report", args.command, directory=False)


def _check_path(path: Path, option: str, command: str, *, directory: bool) -> None:
    if not directory and path.is_dir():
        raise ValueError(
            f"{option} '{path}' is an existing directory; give the file to write for {command}."
        )
    for candidate in (path, *path.parents) if directory else path.parents:
        if not candidate.exists():
            continue
        if not candidate.is_dir():
            what = (
                "it is an existing file"
                if candidate == path
                else f"'{candidate}' above it is an existing file"
            )
            kind = "a directory" if directory else "a file in a directory"
            raise ValueError(
                f"{option} '{path}' must be {kind} for the {command} outputs, but {what}. Give "
                + (
                    "a directory (created when missing; files of the same names in it are "
                    "replaced)."
                    if directory
                    else "a file path whose folders are directories."
                )
            )
        _check_writable(candidate, path, option)
        return


def _check_writable(folder: Path, path: Path, option: str) -> None:
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        where = "" if folder == path else f" (its nearest existing folder '{folder}')"
        raise ValueError(
            f"{option} '{path}' cannot be written{where}: {error.strerror or error}. Give a "
            "path in a folder you can write to; nothing was computed."
        ) from None
