"""What the README and docs/ show is true: every `plimsoll` command and flag in their
code blocks is one `--help` lists, every `examples/`, `scenarios/` or `schemas/` path they
name exists, and every relative link points at a file (and a heading) that is there; and
all of them together stay small enough for a newcomer to hold. The same for the help
itself: every example a command's `--help` gives uses only commands and flags that `--help`
lists."""

import functools
import os
import pathlib
import re
import shlex
import subprocess

import pytest

from conftest import BIN, ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def page_id(page):
    return str(page.relative_to(ROOT))


@functools.lru_cache(maxsize=None)
def helptext(*words):
    # Wide enough that clap wraps nothing: an example stays on one line.
    env = {**os.environ, "COLUMNS": "1000"}
    try:
        p = subprocess.run([BIN, *words, "--help"], capture_output=True, text=True, env=env)
    except FileNotFoundError:
        return 127, ""
    return p.returncode, p.stdout


def subcommands(*words):
    """The commands a `--help` lists under `Commands:` (without `help`)."""
    _, text = helptext(*words)
    block = text.partition("\nCommands:\n")[2].partition("\n\n")[0]
    return [m for m in re.findall(r"^  ([a-z][a-z0-9-]*)\s", block, re.M) if m != "help"]


def command_paths():
    """Every command with a help of its own: the binary, each subcommand, and theirs."""
    out = [()]
    for sub in subcommands():
        out.append((sub,))
        out.extend((sub, inner) for inner in subcommands(sub))
    return out


def help_examples(*words):
    """Each `plimsoll …` example in a help's text after its options, as words: a line that
    starts with it (after `$ ` or a step's number), one after `&&`, `;` or `do`, or one in
    backticks; a description after two spaces is left out."""
    _, text = helptext(*words)
    after = re.split(r"^Options:\n(?:[ \t]+.*\n)*", text, maxsplit=1, flags=re.M)
    if len(after) < 2:
        return
    for line in after[1].splitlines():
        for m in re.finditer(r"(?:^\s*(?:\$\s+|\d+\.\s+)?|&&\s*|;\s*(?:do\s+)?|`)plimsoll\s+([^`;&|]*)", line):
            shown = re.split(r"\s{2,}", m.group(1).strip())[0]
            try:
                yield shlex.split(shown)
            except ValueError:
                yield shown.split()


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


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_and_flag_shown_exists(page):
    for words in commands(page):
        if not words or not re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):
            continue
        path = [words[0]]
        rc, text = helptext(*path)
        assert rc == 0, f"{page_id(page)}: plimsoll {words[0]} is not a command"
        # A subcommand of a subcommand (workload from-traces, bench mock).
        if len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9-]*", words[1]) and f"  {words[1]} " in text:
            path.append(words[1])
            rc, text = helptext(*path)
        for w in words:
            if w.startswith("--"):
                flag = w.split("=")[0]
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
                    f"{page_id(page)}: plimsoll {' '.join(path)} has no {flag}")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_path_and_link_shown_is_there(page):
    text = page.read_text()
    for path in set(re.findall(r"(?<![\w/.-])((?:examples|scenarios|schemas)/[\w./-]*[\w])", text)):
        assert (ROOT / path).exists(), f"{page_id(page)} names {path}, which is not in the repository"
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file) if file else page
        assert dest.exists(), f"{page_id(page)} links {target}, which is not there"
        if anchor and dest.suffix == ".md":
            heads = [re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                     for h in re.findall(r"^#+ (.*)$", dest.read_text(), re.M)]
            assert anchor in heads, f"{page_id(page)} links {target}: no such heading"


MAX_DOCS_BYTES = 250_000


def test_the_docs_stay_small_enough_to_hold():
    """README.md and every docs/**/*.md together: each fact once, the rest a link to it."""
    sizes = {page_id(page): len(page.read_bytes()) for page in PAGES}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: kv[1], reverse=True)[:5]
    assert total <= MAX_DOCS_BYTES, (
        f"README.md and docs/ hold {total:,} bytes, over {MAX_DOCS_BYTES:,}; the largest pages: "
        + ", ".join(f"{name} {size:,}" for name, size in largest))


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(("plimsoll", *p)))
def test_every_help_example_uses_only_what_help_lists(path):
    rc, _ = helptext(*path)
    assert rc == 0, f"plimsoll {' '.join(path)} --help failed"
    for words in help_examples(*path):
        if not words or not re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):
            continue
        shown = "plimsoll " + " ".join(words)
        where = f"the example `{shown}` in plimsoll {' '.join(path)} --help".replace("  ", " ")
        target = [words[0]]
        rc, text = helptext(*target)
        assert rc == 0, f"{where}: plimsoll {words[0]} is not a command"
        if len(words) > 1 and words[1] in subcommands(words[0]):
            target.append(words[1])
            rc, text = helptext(*target)
        for w in words:
            flag = w.split("=")[0]
            if re.fullmatch(r"--[a-z][\w-]*|-[a-zA-Z]", flag):
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
                    f"{where}: plimsoll {' '.join(target)} has no {flag}")


def test_the_helps_give_examples():
    """The check above reads something: the helps hold examples of most commands."""
    shown = {words[0] for path in command_paths() for words in help_examples(*path) if words}
    assert {"mock", "ramp", "run", "demo", "compare", "bench"} <= shown, shown
