"""ember.utils.benchmark against torch.utils.benchmark: Measurement statistics and reprs and
Compare's tables are compared with torch's on the same fixed times; Timer is checked by what it
runs (timings vary)."""
import random

import pytest
import torch
import torch.utils.benchmark as tbench

import ember
import ember.utils.benchmark as ebench


def _measurement(lib, times, number=10, **spec):
    spec.setdefault("stmt", "x + y")
    spec.setdefault("setup", "pass")
    return lib.Measurement(number_per_run=number, raw_times=list(times),
                           task_spec=lib.TaskSpec(**spec))


def _without_address(text):
    first, _, rest = text.partition("\n")
    assert first.startswith("<") and "Measurement object at 0x" in first
    return rest


TIMES = {
    "one": [3.2e-5],
    "three": [1.0e-3, 1.2e-3, 1.1e-3],
    "steady": [2.0e-6, 2.01e-6, 1.99e-6, 2.0e-6, 2.02e-6, 1.98e-6],
    "noisy": [1e-6, 5e-6, 2e-6, 9e-6, 3e-6, 1e-5, 4e-6, 2e-6],
    "fluctuating": [1.0, 1.05, 1.1, 1.15, 1.2, 0.95],
    "seconds": [12.5, 13.1, 12.9, 13.0],
}


@pytest.mark.parametrize("name", sorted(TIMES))
@pytest.mark.parametrize("spec", [
    {},
    {"label": "add", "sub_label": "float", "description": "n=4", "num_threads": 4},
    {"stmt": "y = x * 2\nz = y + 1", "setup": "x = 1\nw = 2", "sub_label": "multi"},
    {"stmt": "f(x)", "setup": "x = torch.ones(3)", "env": "A"},
])
def test_measurement_statistics_and_repr_match_torch(name, spec):
    t = _measurement(tbench, TIMES[name], **spec)
    e = _measurement(ebench, TIMES[name], **spec)
    for attr in ("times", "number_per_run", "raw_times"):
        assert getattr(e, attr) == getattr(t, attr)
    for attr in ("mean", "median", "iqr"):
        assert getattr(e, attr) == pytest.approx(getattr(t, attr), rel=1e-6)
    for attr in ("significant_figures", "has_warnings", "title", "as_row_name", "stmt", "label",
                 "sub_label", "description", "num_threads", "env"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert e.meets_confidence(0.05) == t.meets_confidence(0.05)
    assert _without_address(repr(e)) == _without_address(repr(t))
    assert repr(e).startswith("<ember.utils.benchmark.utils.common.Measurement object at 0x")


def test_measurement_merge_matches_torch():
    def merged(lib):
        a = _measurement(lib, [1e-3, 2e-3], number=10, label="l")
        b = _measurement(lib, [4e-3], number=100, label="l")
        c = _measurement(lib, [1e-3], number=1, label="other")
        return lib.Measurement.merge([a, b, c])

    t, e = merged(tbench), merged(ebench)
    assert [m.raw_times for m in e] == [m.raw_times for m in t]
    assert [m.number_per_run for m in e] == [1, 1]
    assert [m.label for m in e] == ["l", "other"]


@pytest.mark.parametrize("value", [3e-10, 1e-9, 7.5e-9, 2.5e-7, 1e-6, 4.2e-5, 9.99e-4, 1e-3, 0.5,
                                   1.0, 37.0])
def test_select_unit_matches_torch(value):
    assert ebench.select_unit(value) == tbench.select_unit(value)


@pytest.mark.parametrize("value,n", [(3.14159, 2), (3.14159, 4), (123456.0, 3), (0.000123456, 2),
                                     (99.95, 3), (1.0, 1), (2.5, 1), (-42.123, 2)])
def test_trim_sigfig_matches_torch(value, n):
    assert ebench.trim_sigfig(value, n) == tbench.trim_sigfig(value, n)


def test_small_helpers_match_torch():
    for unit in ("ns", "us", "ms", "s"):
        assert ebench.unit_to_english(unit) == tbench.unit_to_english(unit)
    items = [3, 1, 3, "a", 1, None, "a"]
    assert ebench.ordered_unique(items) == tbench.ordered_unique(items) == [3, 1, "a", None]
    with pytest.raises(AssertionError, match="must be an integer"):
        ebench.trim_sigfig(1.0, 1.5)
    assert ebench.utils.common.select_unit is ebench.select_unit
    assert {m.name for m in ebench.Language} == {m.name for m in tbench.Language}
    assert {m.value for m in ebench.Colorize} == {m.value for m in tbench.Colorize}


def _table_measurements(lib, seed):
    """A grid of label x sub_label x description x threads (one cell missing, two envs in
    one label, replicates to merge)."""
    rng = random.Random(seed)
    out = []
    for label in ("add", "matmul"):
        for sub_label in ("float", "int"):
            for description in ("n=1", "n=64", "n=4096"):
                for num_threads in (1, 4):
                    if (label, sub_label, description) == ("add", "int", "n=4096"):
                        continue
                    scale = {"n=1": 1e-6, "n=64": 3e-5, "n=4096": 2e-3}[description]
                    envs = (("A", "B") if sub_label == "float" else ("A",)) if label == "matmul" \
                        else (None,)
                    for env in envs:
                        for _ in range(2):
                            times = [scale * rng.uniform(0.8, 1.6) for _ in range(6)]
                            out.append(_measurement(
                                lib, times, number=rng.choice((1, 10, 100)), label=label,
                                sub_label=sub_label, description=description,
                                num_threads=num_threads, env=env))
    return out


@pytest.mark.parametrize("trim", [False, True])
@pytest.mark.parametrize("colorize", [None, "columnwise", "rowwise"])
@pytest.mark.parametrize("highlight", [False, True])
def test_compare_table_matches_torch(trim, colorize, highlight):
    tables = []
    for lib in (tbench, ebench):
        compare = lib.Compare(_table_measurements(lib, seed=7)[:40])
        compare.extend_results(_table_measurements(lib, seed=7)[40:])
        if trim:
            compare.trim_significant_figures()
        if colorize:
            compare.colorize(rowwise=colorize == "rowwise")
        if highlight:
            compare.highlight_warnings()
        tables.append(str(compare))
    assert tables[1] == tables[0]
    assert "[" in tables[1] and "Times are in" in tables[1]


def test_compare_print_and_stmt_rows(capsys):
    results = [_measurement(ebench, [1e-6 * (i + 1)] * 4, stmt=stmt, description=d)
               for i, (stmt, d) in enumerate([("a + b", "x"), ("a * b", "x"), ("a + b", "y")])]
    expected = str(tbench.Compare([_measurement(tbench, [1e-6 * (i + 1)] * 4, stmt=stmt,
                                                description=d)
                                   for i, (stmt, d) in enumerate([("a + b", "x"), ("a * b", "x"),
                                                                  ("a + b", "y")])]))
    ebench.Compare(results).print()
    assert capsys.readouterr().out == expected + "\n"


def test_compare_rejects_what_is_not_a_measurement():
    with pytest.raises(ValueError) as t_err:
        tbench.Compare([1.0])
    with pytest.raises(ValueError) as e_err:
        ebench.Compare([1.0])
    assert str(e_err.value) == str(t_err.value)


def _counting_timer(lib, **kwargs):
    calls = {"stmt": 0, "setup": 0}
    timer = lib.Timer(stmt="calls['stmt'] += 1", setup="calls['setup'] += 1",
                      globals={"calls": calls}, **kwargs)
    return timer, calls


@pytest.mark.parametrize("number", [1, 5, 250, 1000])
def test_timeit_runs_stmt_as_often_as_torch(number):
    counts = []
    for lib in (tbench, ebench):
        timer, calls = _counting_timer(lib)
        m = timer.timeit(number)
        assert m.number_per_run == number and len(m.raw_times) == 1
        assert m.times == [m.raw_times[0] / number]
        counts.append(dict(calls))
    # a warmup of max(number // 100, 2) runs, then the measured ones; setup before each
    assert counts[1] == counts[0] == {"stmt": max(number // 100, 2) + number, "setup": 2}


def test_blocked_autorange_blocks_and_callback():
    timer, calls = _counting_timer(ebench)
    blocks = []
    m = timer.blocked_autorange(callback=lambda n, t: blocks.append((n, t)), min_run_time=0.02)
    number = m.number_per_run
    assert number >= 1 and str(number).strip("0") == "1"  # a power of ten
    assert [n for n, _ in blocks] == [number] * len(m.raw_times)
    assert [t for _, t in blocks] == m.raw_times
    assert sum(m.raw_times) >= 0.02
    assert calls["stmt"] >= number * len(m.raw_times)
    assert m.median > 0 and m.mean > 0


def test_adaptive_autorange_stops_on_confidence_or_max_run_time():
    timer, _ = _counting_timer(ebench)
    m = timer.adaptive_autorange(threshold=10.0, min_run_time=0.001)
    assert len(m.raw_times) >= 4 and m.meets_confidence(10.0)
    timer = ebench.Timer("sleep(0.002 * random())", setup="from time import sleep\n"
                         "from random import random")
    m = timer.adaptive_autorange(threshold=1e-9, max_run_time=0.05)
    assert sum(m.raw_times) < 0.05 + 10 * m.raw_times[-1]


def test_timer_sets_threads_and_restores_them():
    seen = []
    before = ember.get_num_threads()
    timer = ebench.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
                         num_threads=3)
    m = timer.timeit(4)
    assert set(seen) == {3} and ember.get_num_threads() == before
    assert m.num_threads == 3 and "3 threads" in repr(m)


def test_timer_globals_and_metadata():
    user_globals = {"x": ember.ones(3)}
    timer = ebench.Timer(stmt="""
        y = torch.add(x, 1)
        z = ember.mul(y, 2)
    """, setup="w = x * 2", globals=user_globals, label="add-mul", sub_label="f32",
                         description="n=3", env="cpu")
    assert set(user_globals) == {"x"}  # copied, not changed
    m = timer.timeit(3)
    assert m.stmt == "y = torch.add(x, 1)\nz = ember.mul(y, 2)"
    assert (m.label, m.sub_label, m.description, m.env, m.setup) == (
        "add-mul", "f32", "n=3", "cpu", "w = x * 2")
    assert m.title == "add-mul: f32"
    t_timer = tbench.Timer(stmt="""
        y = torch.add(x, 1)
    """, setup="w = x * 2", globals={"x": torch.ones(3)})
    assert t_timer.timeit(3).stmt == ebench.Timer(stmt="""
        y = torch.add(x, 1)
    """, setup="w = x * 2", globals={"x": ember.ones(3)}).timeit(3).stmt


def test_timer_with_a_custom_clock():
    ticks = iter(range(100))
    m = ebench.Timer("pass", timer=lambda: float(next(ticks))).timeit(7)
    assert m.raw_times == [1.0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.Timer(stmt=lambda: None),
    lambda lib: lib.Timer("pass", global_setup="#include <x>"),
    lambda lib: lib.Timer("pass", language="fortran"),
])
def test_timer_bad_arguments_raise_as_torch(call):
    with pytest.raises(ValueError) as t_err:
        call(tbench)
    with pytest.raises(ValueError) as e_err:
        call(ebench)
    assert str(e_err.value) == str(t_err.value)


def test_timer_repeat_autorange_and_cpp_are_not_there():
    timer = ebench.Timer()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        timer.repeat()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        timer.autorange()
    with pytest.raises(NotImplementedError, match="Python statements only"):
        ebench.Timer("x", language="cpp")


def test_benchmark_reachable_from_import_ember():
    assert ember.utils.benchmark is ebench
    for name in ("Timer", "Measurement", "Compare", "TaskSpec", "select_unit", "ordered_unique",
                 "trim_sigfig", "unit_to_english", "set_torch_threads", "Language", "Colorize",
                 "timer"):
        assert hasattr(ebench, name), name
    assert callable(ebench.timer) and isinstance(ebench.timer(), float)
