"""ember.profiler: op timing with torch.profiler's API, Chrome traces, schedules."""
import gzip
import json

import pytest

import ember
from ember.autograd.graph import Node
from ember.profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                            tensorboard_trace_handler)


def _names(prof):
    return [e.name for e in prof.events()]


def _small_graph():
    x = ember.randn(4, 3, requires_grad=True)
    w = ember.randn(3, 2, requires_grad=True)
    return x, w


def test_ops_and_backward_nodes_are_recorded_with_torch_names():
    x, w = _small_graph()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("model"):
            y = (x @ w).relu().mul(2).sum()
        y.backward()
    names = _names(prof)
    for expected in ("model", "aten::matmul", "aten::relu", "aten::mul", "aten::sum",
                     "autograd::engine::evaluate_function: MulBackward0", "MulBackward0",
                     "torch::autograd::AccumulateGrad"):
        assert expected in names, expected
    assert x.grad is not None and w.grad is not None


def test_dunder_operators_get_aten_names():
    a = ember.ones(3)
    with profile() as prof:
        _ = a * 2 + 1
        _ = 2 - a
        b = a.clone()
        b += 1
    names = _names(prof)
    assert {"aten::mul", "aten::add", "aten::rsub", "aten::add_"} <= set(names)


def test_nesting_gives_self_and_total_times():
    x, w = _small_graph()
    with profile() as prof:
        with record_function("outer"):
            (x @ w).sum()
    outer = next(e for e in prof.events() if e.name == "outer")
    children = outer.cpu_children
    assert children and all(c.cpu_parent is outer for c in children)
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in children)
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in children), abs=1e-6)


def test_originals_are_restored_so_the_disabled_path_is_unchanged():
    ember.ones(1) * 2   # (the compiled methods installed at their first use, before the snapshot)
    tensor_mul, module_mul = ember.Tensor.__dict__["__mul__"], ember.mul
    conv2d = ember.nn.functional.conv2d
    backward = type((ember.ones(1, requires_grad=True) * 2).grad_fn).__dict__["backward"]
    with pytest.raises(ValueError):
        with profile():
            assert ember.Tensor.__dict__["__mul__"] is not tensor_mul
            assert ember.mul is not module_mul
            raise ValueError("boom")
    assert ember.Tensor.__dict__["__mul__"] is tensor_mul
    assert ember.mul is module_mul
    assert ember.nn.functional.conv2d is conv2d
    assert type((ember.ones(1, requires_grad=True) * 2).grad_fn).__dict__["backward"] is backward
    assert not any(hasattr(cls.__dict__.get("backward"), "_ember_profiled")
                   for cls in _all_subclasses(Node))


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_module_layers_are_recorded():
    conv = ember.nn.Conv2d(1, 2, 3)
    with profile() as prof:
        ember.nn.functional.cross_entropy(conv(ember.randn(2, 1, 5, 5)).flatten(1),
                                          ember.tensor([0, 1])).backward()
    names = set(_names(prof))
    assert {"aten::conv2d", "aten::cross_entropy",
            "autograd::engine::evaluate_function: ConvolutionBackward0"} <= names


def test_key_averages_counts_and_table_layout():
    a = ember.ones(2, 3)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            a.mul(2)
        a.sum()
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["aten::mul"].count == 3
    assert averages["aten::mul"].cpu_time == pytest.approx(averages["aten::mul"].cpu_time_total / 3)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    lines = table.splitlines()
    header = lines[1].split("  ")
    assert [h.strip() for h in header if h.strip()] == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert len(lines) == 6  # separator, header, separator, one row, separator, total
    assert lines[-1].startswith("Self CPU time total: ")
    by_shape = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in by_shape.splitlines()[1]
    assert "[[2, 3], []]" in by_shape


def test_chrome_trace_has_one_complete_event_per_op(tmp_path):
    a = ember.ones(2, 3)
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            a.mul(2).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in complete] == ["block", "aten::mul", "aten::sum"]
    for event in complete:
        assert {"name", "ts", "dur", "pid", "tid", "args"} <= set(event)
        assert event["dur"] >= 0
    block, mul, total = complete
    assert block["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= block["ts"] + block["dur"] + 1e-3
    assert mul["args"]["Input Dims"] == [[2, 3], []]
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    assert json.loads(gzip.open(gz, "rt").read())["traceEvents"] == trace["traceEvents"]


def test_no_input_dims_without_record_shapes(tmp_path):
    with profile() as prof:
        ember.ones(2).mul(2)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert all("Input Dims" not in e.get("args", {}) for e in events)


def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    ours = schedule(wait=2, warmup=1, active=3, repeat=2, skip_first=1)
    theirs = torch.profiler.schedule(wait=2, warmup=1, active=3, repeat=2, skip_first=1)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]
    assert ours(6) is ProfilerAction.RECORD_AND_SAVE


def test_schedule_records_only_active_steps_and_calls_on_trace_ready():
    ready = []
    a = ember.ones(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: ready.append([e.name for e in p.events()])) as prof:
        for step in range(6):
            a.mul(step)
            prof.step()
    assert len(ready) == 1
    assert ready[0].count("aten::mul") == 2
    assert "ProfilerStep#2" in ready[0] and "ProfilerStep#3" in ready[0]
    assert ember.Tensor.__dict__["mul"].__name__ == "mul" and not hasattr(
        ember.Tensor.__dict__["mul"], "_ember_profiled")


def test_default_schedule_calls_on_trace_ready_at_exit():
    ready = []
    with profile(on_trace_ready=ready.append) as prof:
        ember.ones(1).add(1)
    assert ready == [prof]


def test_record_function_as_decorator_and_outside_a_profile():
    @record_function("helper")
    def helper(t):
        return t.exp()

    assert helper(ember.zeros(1)).item() == 1.0  # no profile: just runs
    with profile() as prof:
        helper(ember.zeros(1))
    names = _names(prof)
    assert names.index("helper") < names.index("aten::exp")
    assert prof.events()[names.index("aten::exp")].cpu_parent.name == "helper"


def test_nested_profiles_are_refused():
    with profile():
        with pytest.raises(RuntimeError, match="already recording"):
            with profile():
                pass


def test_with_stack_records_the_callers_frames():
    with profile(with_stack=True) as prof:
        ember.ones(2).neg()
    neg = next(e for e in prof.events() if e.name == "aten::neg")
    assert "test_profiler.py" in neg.stack[0]
    table = prof.key_averages(group_by_stack_n=2).table(sort_by="self_cpu_time_total")
    assert "Source Location" in table


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w")):
        ember.ones(2).exp()
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w.") and files[0].name.endswith(".pt.trace.json")
    assert any(e.get("name") == "aten::exp" for e in json.loads(files[0].read_text())["traceEvents"])
