"""House rules checked on ember's source: timings belong in BENCHMARKS.md and
docs/performance-log.md (with the command that made them), not in code comments or docstrings."""
import pathlib
import re

import ember

SRC = pathlib.Path(ember.__file__).parent
TIMING = re.compile(r"\b\d+(\.\d+)? ?(us|µs|ms)\b|\b\d+% (faster|slower)\b|\b\d+(\.\d+)?x (faster|slower)\b")


def test_no_timings_in_the_source():
    found = [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
             for path in sorted(SRC.rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if TIMING.search(line)]
    assert not found, found


def test_the_pattern_finds_timings():
    for text in ("# about 0.5 ms", "costs ~4 us", "(~15% faster)", "1.5x slower"):
        assert TIMING.search(text), text
    for text in ("# 2**20 cycles", "x1.5", "float32 is 4 bytes"):
        assert not TIMING.search(text), text


ATTACH = re.compile(r"^\s*Tensor\.\w+(\s*,\s*Tensor\.\w+)*\s*=|setattr\(Tensor\b")


def test_tensor_methods_are_attached_one_way():
    """Modules add Tensor methods through ``ops._common.method`` (a decorator, or a call for a
    property or a function made by a factory), not by assignment or setattr."""
    found = [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
             for path in sorted(SRC.rglob("*.py")) if path.name != "_common.py"
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if ATTACH.search(line)]
    assert not found, found
    assert ATTACH.search("Tensor.exp_ = exp_") and ATTACH.search("setattr(Tensor, name, fn)")
