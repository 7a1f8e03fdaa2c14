"""The documents (the markdown files at the repository root and in docs/) keep three rules:

- they read as documents, not as a work log: no "this session" / "the fifth session" / "this
  round", and no paths outside the repository (``/tmp/...``, ``/work/...``);
- every command they cite in code (``python -m benchmarks.X ...``, ``python benchmarks/X.py
  ...`` or ``python scripts/X.py ...``, with ``.venv/bin/`` or environment variables in front,
  ``python -m ember.X``, ``make X``) names a module, script or make target that exists, with
  arguments its parser accepts (model names included); every table of measurements is followed by such a command;
- relative links point to files (and headings) that exist.

No torch: benchmark modules that import torch are read with ``ast``, not imported.
"""
import argparse
import ast
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: benchmarks/

DOCS = sorted([*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md")])
DOC_IDS = [str(p.relative_to(ROOT)) for p in DOCS]

WORK_LOG = re.compile(
    r"\b(?:this|that|the\s+\w+|previous|next|earlier|first|second|third|fourth|fifth|sixth)"
    r"\s+sessions?\b|\bthis\s+round\b", re.IGNORECASE)
OUTSIDE_PATHS = re.compile(r"(?<![\w.])/(?:tmp|work)/")

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
COMMAND_START = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\S*/)?(?:python3?|make)\b")
PYTHON = re.compile(
    r"(?:^|(?<=[\s(]))(?:\S*/)?python3?(?:\.\d+)?\s+"
    r"(?:-m\s+(?P<module>(?:benchmarks|ember)(?:\.\w+)+)|(?P<script>(?:benchmarks|scripts)/[\w/]+\.py))"
    r"(?P<args>[^`;&|#>)]*)")
BARE_SCRIPT = re.compile(r"^(?P<script>benchmarks/[\w/]+\.py)(?P<args>[^`;&|#>)]*)")
PATH_MENTION = re.compile(r"(?<![\w./])(benchmarks/[\w/]+\.py)\b")
MAKE = re.compile(r"(?:^|(?<=\s))make\s+(?P<target>[\w-]+)")
MEASUREMENT_HEADER = re.compile(r"\b(?:ms|µs|us|MB|GB/s|batches/s)\b")


def read(path):
    return path.read_text(encoding="utf-8")


def code_snippets(text):
    """The code of a markdown text: each line of a fenced or indented block (a line ending in a
    backslash joined with the next) and each inline code span (line breaks as spaces)."""
    snippets, prose, in_fence, pending = [], [], False, ""
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            prose.append("")
            continue
        indented = not in_fence and line.startswith("    ") and COMMAND_START.match(line.strip())
        if in_fence or indented or pending:
            code = pending + line.strip()
            if code.endswith("\\"):
                pending = code[:-1] + " "
            else:
                snippets.append(code)
                pending = ""
            prose.append("")
        else:
            prose.append(line)
    snippets.extend(" ".join(m.group(2).split()) for m in CODE_SPAN.finditer("\n".join(prose)))
    return snippets


def cited_commands(text):
    """(kind, name, argv, snippet) for each command cited in the code of ``text``; kind is
    'module', 'script' or 'make'."""
    found = []
    for snippet in code_snippets(text):
        for m in PYTHON.finditer(snippet):
            kind = "module" if m.group("module") else "script"
            found.append((kind, m.group(kind), _argv(m.group("args")), snippet))
        m = BARE_SCRIPT.match(snippet)
        if m and m.group("args").strip():  # a script named with arguments: a command
            found.append(("script", m.group("script"), _argv(m.group("args")), snippet))
        for m in PATH_MENTION.finditer(snippet):
            found.append(("path", m.group(1), None, snippet))
        for m in MAKE.finditer(snippet):
            found.append(("make", m.group("target"), None, snippet))
    return found


def _argv(args):
    return shlex.split(args.strip().rstrip("\\"))


def make_targets():
    text = read(ROOT / "Makefile")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, re.MULTILINE))


def module_path(name):
    parts = name.split(".")
    base = ROOT / "src" if parts[0] == "ember" else ROOT
    path = base.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__main__.py"):
        if candidate.exists():
            return candidate
    return None


# -- benchmark parsers: benchmarks.run's own, the others rebuilt from their source --------

def _module_names(tree):
    """Top-level names whose values can be known without running the module: literals, dicts
    with literal keys, and MODELS imported from benchmarks.models."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "benchmarks.models":
            import benchmarks.models
            for alias in node.names:
                if hasattr(benchmarks.models, alias.name):
                    names[alias.asname or alias.name] = getattr(benchmarks.models, alias.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                if isinstance(node.value, ast.Dict) and all(
                        isinstance(k, ast.Constant) for k in node.value.keys):
                    names[node.targets[0].id] = dict.fromkeys(k.value for k in node.value.keys)
    return names


def _evaluate(expr, names):
    try:
        return ast.literal_eval(expr)
    except ValueError:
        pass
    builtins = {"sorted": sorted, "list": list, "tuple": tuple, "set": set}
    try:
        return eval(compile(ast.Expression(expr), "<choices>", "eval"),
                    {"__builtins__": builtins}, dict(names))
    except Exception:  # a name the module computes at run time: no check on the values
        return None


def parser_from_source(path):
    """An argparse parser with the options a benchmark script declares, read from its source
    (its types and choices where they can be known without importing it)."""
    tree = ast.parse(read(path))
    names = _module_names(tree)
    parser = argparse.ArgumentParser(prog=path.name, add_help=True)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg in ("nargs", "action"):
                kwargs[kw.arg] = ast.literal_eval(kw.value)
            elif kw.arg == "type" and isinstance(kw.value, ast.Name) \
                    and kw.value.id in ("int", "float", "str"):
                kwargs["type"] = {"int": int, "float": float, "str": str}[kw.value.id]
            elif kw.arg == "choices":
                choices = _evaluate(kw.value, names)
                if choices is not None:
                    kwargs["choices"] = list(choices)
        parser.add_argument(*flags, **kwargs)
    return parser


def benchmark_parser(kind, name):
    module = name if kind == "module" else name[:-3].replace("/", ".")
    if module == "benchmarks.run":
        from benchmarks import run
        return run.parse_args
    path = module_path(module)
    if path is None:
        return None
    parser = parser_from_source(path)
    if not any(isinstance(a, argparse._StoreAction) or a.option_strings
               for a in parser._actions if not isinstance(a, argparse._HelpAction)):
        return None  # no command line of its own (benchmarks.models)
    return parser.parse_args


# -- the rules --------------------------------------------------------------------------

@pytest.mark.parametrize("path", DOCS, ids=DOC_IDS)
def test_no_work_log_wording(path):
    hits = [m.group(0) for m in WORK_LOG.finditer(read(path))]
    assert not hits, f"{path.name} speaks as a work log: {hits}"


@pytest.mark.parametrize("path", DOCS, ids=DOC_IDS)
def test_no_paths_outside_the_repository(path):
    lines = [line for line in read(path).splitlines() if OUTSIDE_PATHS.search(line)]
    assert not lines, f"{path.name} names paths outside the repository: {lines}"


@pytest.mark.parametrize("path", DOCS, ids=DOC_IDS)
def test_cited_commands_exist_and_parse(path):
    targets = make_targets()
    problems = []
    for kind, name, argv, snippet in cited_commands(read(path)):
        if kind == "make":
            if name not in targets:
                problems.append(f"no make target {name!r}: {snippet}")
            continue
        if kind == "path":
            if not (ROOT / name).exists():
                problems.append(f"no file {name}: {snippet}")
            continue
        exists = module_path(name) if kind == "module" else (ROOT / name).exists()
        if not exists:
            problems.append(f"no {kind} {name}: {snippet}")
            continue
        if not name.replace("/", ".").startswith(("benchmarks.", "scripts.")):
            continue
        parse = benchmark_parser(kind, name)
        if parse is None:
            continue
        try:
            parse(argv)
        except SystemExit:
            problems.append(f"arguments not accepted by {name}: {snippet}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", DOCS, ids=DOC_IDS)
def test_every_measurement_table_has_its_command(path):
    """A table whose header names a unit (ms, µs, MB, ...) or both libraries is followed,
    before the next heading, by a cited benchmark command."""
    lines = read(path).splitlines()
    missing = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        header, start = lines[i], i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        measured = MEASUREMENT_HEADER.search(header) or (
            "ember" in header.lower() and "torch" in header.lower())
        if not measured:
            continue
        end = i
        while end < len(lines) and not lines[end].startswith("#"):
            end += 1
        after = "\n".join(lines[i:end])
        if not any(kind in ("module", "script") for kind, *_ in cited_commands(after)):
            missing.append(f"line {start + 1}: {header}")
    assert not missing, f"{path.name}: tables without a command after them:\n" + "\n".join(missing)


def _slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path):
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+)$", read(path), re.MULTILINE)}


@pytest.mark.parametrize("path", DOCS, ids=DOC_IDS)
def test_relative_links_resolve(path):
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", read(path)):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"no file: {target}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            problems.append(f"no heading #{anchor} in {linked.name}")
    assert not problems, f"{path.name}: " + "; ".join(problems)


# -- the checks themselves catch what they are for ----------------------------------------

def test_work_log_wording_is_recognised_and_plain_uses_are_not():
    for text in ("in this session", "the fifth session's runs", "end of the third\nsession",
                 "the previous session", "measured this round"):
        assert WORK_LOG.search(text), text
    for text in ("a session of training", "session-scoped fixtures", "sessions of work",
                 "the round trip", "round to nearest"):
        assert not WORK_LOG.search(text), text


def test_commands_are_found_in_blocks_spans_and_continued_lines():
    text = "\n".join([
        "Run `OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.run --models mlp",
        "--threads 1` or:",
        "",
        "```",
        ".venv/bin/python benchmarks/layers.py \\",
        "    --repeats 15",
        "make bench",
        "```",
        "",
        "    PYTHONPATH=src .venv/bin/python benchmarks/distributed.py --reps 15",
    ])
    found = {(kind, name, tuple(argv) if argv is not None else None)
             for kind, name, argv, _ in cited_commands(text)}
    assert ("module", "benchmarks.run", ("--models", "mlp", "--threads", "1")) in found
    assert ("script", "benchmarks/layers.py", ("--repeats", "15")) in found
    assert ("script", "benchmarks/distributed.py", ("--reps", "15")) in found
    assert ("make", "bench", None) in found


@pytest.mark.parametrize("command", [
    "python -m benchmarks.run --models nosuchmodel",
    "python -m benchmarks.run --no-such-flag",
    "python -m benchmarks.profile_steps nosuchmodel --threads 2",
    "python benchmarks/layers.py --threads two",
    "python -m benchmarks.gelu_erf --threads two",
])
def test_bad_arguments_are_caught(command):
    (kind, name, argv, _), = [c for c in cited_commands(f"`{command}`") if c[0] != "path"]
    with pytest.raises(SystemExit):
        benchmark_parser(kind, name)(argv)


def test_good_arguments_pass():
    for command in ("python -m benchmarks.run --threads 1 --models resnet20 resnet20_channels_last",
                    "python -m benchmarks.profile_steps resnet20 --threads 1 --steps 3",
                    "python -m benchmarks.batch_norm_kernels --channels-last",
                    "python benchmarks/distributed.py --reps 15 --single mlp"):
        (kind, name, argv, _), = [c for c in cited_commands(f"`{command}`") if c[0] != "path"]
        benchmark_parser(kind, name)(argv)


def test_missing_modules_scripts_and_targets_are_caught():
    assert module_path("benchmarks.nosuch") is None
    assert module_path("benchmarks.run") is not None
    assert module_path("ember.distributed.run") is not None
    assert "bench" in make_targets() and "nosuch" not in make_targets()
