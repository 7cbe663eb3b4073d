"""What the README and docs/ show is true: every `plimsoll` command and flag in their
code blocks is one `--help` lists, every `examples/`, `scenarios/` or `schemas/` path they
name exists, and every relative link points at a file (and a heading) that is there."""

import functools
import pathlib
import re
import shlex
import subprocess

import pytest

from conftest import BIN, ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@functools.lru_cache(maxsize=None)
def helptext(*words):
    p = subprocess.run([BIN, *words, "--help"], capture_output=True, text=True)
    return p.returncode, p.stdout


def code_blocks(text):
    return re.findall(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S)


def commands(page):
    """Each `plimsoll …` invocation in a page's shell blocks, as words."""
    for block in code_blocks(page.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0]
            for m in re.finditer(r"(?:^|[;&|(]\s*|\s)(?:\./target/release/)?plimsoll\s+([^;&|)]*)", line):
                try:
                    yield shlex.split(m.group(1))
                except ValueError:
                    yield m.group(1).split()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_and_flag_shown_exists(page):
    for words in commands(page):
        if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
            continue
        path = [words[0]]
        rc, text = helptext(*path)
        assert rc == 0, f"{page.name}: plimsoll {words[0]} is not a command"
        # A subcommand of a subcommand (workload from-traces, bench mock).
        if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*", words[1]) and f"  {words[1]} " in text:
            path.append(words[1])
            rc, text = helptext(*path)
        for w in words:
            if w.startswith("--"):
                flag = w.split("=")[0]
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
                    f"{page.name}: plimsoll {' '.join(path)} has no {flag}")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_and_link_shown_is_there(page):
    text = page.read_text()
    for path in set(re.findall(r"(?<![\w/.-])((?:examples|scenarios|schemas)/[\w./-]*[\w])", text)):
        assert (ROOT / path).exists(), f"{page.name} names {path}, which is not in the repository"
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file) if file else page
        assert dest.exists(), f"{page.name} links {target}, which is not there"
        if anchor and dest.suffix == ".md":
            heads = [re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                     for h in re.findall(r"^#+ (.*)$", dest.read_text(), re.M)]
            assert anchor in heads, f"{page.name} links {target}: no such heading"
