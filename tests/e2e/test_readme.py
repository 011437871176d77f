"""The README's "First five minutes": its curl commands, run as written against the server, answer
what the README says they answer (ids, times and the tokens' values aside).

The section is a sequence of indented blocks: a block of commands, then (usually) a block with
their answer. The commands run in one bash session, in a scratch folder holding the
`.onboard/keys.env` that `make run` would have written, with the server's URL for the README's.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import uuid
from pathlib import Path

from conftest import ANON_KEY, SERVICE_ROLE_KEY, URL

README = Path(__file__).resolve().parents[2] / "README.md"
UUID = re.compile(r"[0-9a-f]{8}-(?:[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|…)")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?\+00:00")


def section_blocks() -> list[tuple[str, str | None]]:
    text = README.read_text()
    start = text.index("## First five minutes (curl)")
    end = text.index("\n## ", start + 1)
    blocks: list[list[str]] = []
    previous_blank = True
    for line in text[start:end].splitlines():
        if line.startswith("    "):
            if previous_blank or not blocks:
                blocks.append([])
            blocks[-1].append(line[4:])
            previous_blank = False
        else:
            # A prose line ends a block; a blank line may separate two blocks.
            previous_blank = True
    pairs: list[tuple[str, str | None]] = []
    for block in blocks:
        first = block[0].lstrip()
        if first[:1] in "[{" or first[:1].isdigit():
            assert pairs and pairs[-1][1] is None, f"an answer without its commands: {block}"
            pairs[-1] = (pairs[-1][0], "".join(line.strip() for line in block))
        else:
            pairs.append(("\n".join(block), None))
    return pairs


def normalized(text: str) -> str:
    return TIME.sub("<time>", UUID.sub("<uuid>", "".join(line.strip() for line in text.splitlines())))


def test_first_five_minutes_answer_as_the_readme_says():
    pairs = section_blocks()
    assert len(pairs) >= 8, f"the README's first five minutes have {len(pairs)} command blocks"
    assert sum(answer is not None for _, answer in pairs) >= 7
    email = f"ada-{uuid.uuid4().hex[:8]}@example.com"
    with tempfile.TemporaryDirectory() as folder:
        keys = Path(folder, ".onboard")
        keys.mkdir()
        (keys / "keys.env").write_text(f"ANON_KEY={ANON_KEY}\nSERVICE_ROLE_KEY={SERVICE_ROLE_KEY}\n")
        script = ["set -u"]
        for index, (commands, _) in enumerate(pairs):
            script.append(commands.replace("http://127.0.0.1:54321", URL).replace("ada@example.com", email))
            script.append(f"echo; echo '@@@ {index}'")
        run = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "ANON_KEY": "", "SERVICE_ROLE_KEY": ""})
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", run.stderr
    outputs = re.split(r"\n?@@@ \d+\n", run.stdout)
    for (commands, answer), output in zip(pairs, outputs):
        if answer is None:
            continue
        got = normalized(output.replace(email, "ada@example.com"))
        assert got == normalized(answer), f"{commands}\nanswered\n{output}\nnot\n{answer}"
