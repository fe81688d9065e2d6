"""Every command block of the README runs as written, in order, in a fresh directory.

The ``bash`` and ``python`` blocks are run one after another in a temporary directory that holds
only a link to the repository's ``tests/`` (the eval-log walkthrough reads ``tests/data/logs``),
with this interpreter's ``bin/`` first on PATH, as after ``make demo`` with the virtualenv
active. Blocks that call ``make`` (set-up and development) are the set-up itself and are not
run; a ``text`` block right after a command block is that block's output, pasted abridged:
every line of it other than ``...`` must appear, exactly and in order, among the lines the
command printed (stdout, then stderr), so the README cannot go stale to the digits it shows.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", flags=re.M | re.S)


def readme_blocks() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(lang, body) for lang, body in FENCE.findall(text) if lang in {"bash", "python"}]


def pasted_outputs() -> dict[int, str]:
    """The ``text`` block after each command block, by the command block's index in
    :func:`readme_blocks`."""
    blocks = FENCE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    out: dict[int, str] = {}
    index = -1
    for k, (lang, body) in enumerate(blocks):
        if lang in {"bash", "python"}:
            index += 1
        elif lang == "text" and k > 0 and blocks[k - 1][0] in {"bash", "python"}:
            out[index] = body
    return out


def stale_lines(pasted: str, printed: str) -> list[str]:
    """The lines of ``pasted`` (``...`` lines skipped) that are not found, in order, among the
    lines of ``printed`` (trailing spaces ignored); empty when the output is current."""
    lines = [line.rstrip() for line in printed.splitlines()]
    position = 0
    missing = []
    for line in (x.rstrip() for x in pasted.splitlines()):
        if line == "...":
            continue
        try:
            position = lines.index(line, position) + 1
        except ValueError:
            missing.append(line)
    return missing


def test_stale_lines_are_found() -> None:
    printed = "a 0.531\nb 0.211\nc 0.000\n"
    assert stale_lines("a 0.531\n...\nc 0.000\n", printed) == []
    assert stale_lines("a 0.530\n", printed) == ["a 0.530"]
    assert stale_lines("c 0.000\na 0.531\n", printed) == ["a 0.531"]  # order matters


def runnable(lang: str, body: str) -> bool:
    return not (lang == "bash" and re.search(r"^\s*make\b", body, flags=re.M))


def test_readme_has_runnable_blocks() -> None:
    blocks = [b for b in readme_blocks() if runnable(*b)]
    assert len(blocks) >= 10
    text = "\n".join(body for _, body in blocks)
    for missing in ("items.parquet", "full.csv"):  # files that never shipped
        assert missing not in text
    assert "load_demo" in text


@pytest.mark.slow
def test_readme_blocks_run_in_order(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    pasted = pasted_outputs()
    for k, (lang, body) in enumerate(readme_blocks()):
        if not runnable(lang, body):
            continue
        if lang == "bash":
            argv = ["bash", "-euo", "pipefail", "-c", body]
        else:
            script = tmp_path / f"block_{k}.py"
            script.write_text(body, encoding="utf-8")
            argv = [sys.executable, str(script)]
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, (
            f"README block {k} ({lang}) failed:\n{body}\n--- stderr ---\n{done.stderr[-3000:]}"
        )
        if k in pasted:
            printed = done.stdout + "\n" + done.stderr
            missing = stale_lines(pasted[k], printed)
            assert not missing, (
                f"README output after block {k} is stale; these lines were not printed:\n"
                + "\n".join(missing)
                + f"\n--- printed ---\n{printed[-4000:]}"
            )
    for written in ("items.csv", "report.html", "results/report.html", "study/report.html"):
        assert (tmp_path / written).is_file(), written
    assert (tmp_path / "domains.html").is_file()
