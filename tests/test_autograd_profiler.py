"""ember.autograd.profiler (torch's legacy profiler API) against torch's structure."""
import json

import pytest
import torch

import ember


def _program(lib):
    x = lib.ones(4, 3, requires_grad=True)
    with lib.autograd.profiler.profile(record_shapes=True, with_stack=False,
                                       use_cuda=False) as prof:
        with lib.autograd.profiler.record_function("block"):
            y = (x * 2).sum()
        y.backward()
    return prof


def _header(table):
    lines = table.splitlines()
    return [c.strip() for c in lines[1].split("  ") if c.strip()]


def test_table_columns_and_events_match_torch():
    ours, theirs = _program(ember), _program(torch)
    assert _header(ours.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)) == \
        _header(theirs.key_averages().table(sort_by="self_cpu_time_total", row_limit=5))
    names = {e.name for e in ours.function_events}
    torch_names = {e.name for e in theirs.function_events}
    for name in ["block", "aten::mul", "aten::sum", "SumBackward0", "MulBackward0"]:
        assert (name in names) == (name in torch_names), name
    table = ours.key_averages().table(sort_by="cpu_time_total", row_limit=2)
    assert len([line for line in table.splitlines() if "aten::" in line or "block" in line
                or "Backward" in line]) <= 2
    assert ours.self_cpu_time_total > 0 and theirs.self_cpu_time_total > 0
    assert type(ours.function_events).__name__ == type(theirs.function_events).__name__ == "EventList"


def test_export_chrome_trace(tmp_path):
    prof = _program(ember)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    names = {e["name"] for e in json.loads(path.read_text())["traceEvents"]}
    assert "aten::mul" in names and "block" in names


def test_results_before_the_profile_ends():
    prof = ember.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()


def test_profile_memory_is_accepted():
    with ember.autograd.profiler.profile(profile_memory=True, use_cuda=True) as prof:
        ember.ones(2) * 2
    assert "aten::mul" in {e.name for e in prof.function_events}


def test_disabled_profile_records_nothing():
    with ember.autograd.profiler.profile(enabled=False) as prof:
        ember.ones(2) * 2
    assert prof.function_events is None


def test_emit_nvtx_is_named_as_missing():
    with pytest.raises(NotImplementedError, match="NVTX"):
        with ember.autograd.profiler.emit_nvtx():
            pass
