"""Smoke test of the benchmark models (benchmarks/models.py): each model, built on ember and on
torch from the same seed with torch's weights copied into ember, gives the same loss on a tiny
batch, and after one training step (backward and optimizer step) still does. No timing. Then the
benchmark scripts run on small settings: their tables have the rows and columns they should,
and each program of benchmarks/programs/ trains under ember."""
import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks/

torch = pytest.importorskip("torch")
import ember  # noqa: E402
from benchmarks.models import MODELS, copy_weights  # noqa: E402
from benchmarks.programs import PROGRAMS  # noqa: E402
from ember._backend import choice  # noqa: E402

# benchmarks that time oneDNN's kernels and ember's loops beside NumPy's (run where they are on)
needs_onednn = pytest.mark.skipif(not choice.enabled(choice.ONEDNN), reason="oneDNN is off (EMBER_ONEDNN=0)")

TINY = {"mlp": {"batch": 4}, "lenet": {"batch": 4}, "resnet20": {"batch": 2},
        "mobilenetv2": {"batch": 2}, "lstm_lm": {"batch": 2, "seq": 5},
        "transformer_lm": {"batch": 2, "seq": 8}, "dcgan": {"batch": 2},
        "resnet20_channels_last": {"batch": 2}, "mobilenetv2_channels_last": {"batch": 2}}
# BatchNorm on a batch of 2 with a large learning rate amplifies float32 rounding in the
# update, so the second step's loss is compared more loosely than the first.
FIRST_RTOL, SECOND_RTOL = 1e-5, 1e-2


def losses(workload):
    return [loss.item() for loss in workload.step()]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ember_step_matches_torch(name):
    torch_workload = MODELS[name](torch, **TINY[name])
    ember_workload = MODELS[name](ember, **TINY[name])
    copy_weights(torch_workload, ember_workload)
    assert ember_workload.parameter_count() == torch_workload.parameter_count()
    for rtol in (FIRST_RTOL, SECOND_RTOL):
        expected, actual = losses(torch_workload), losses(ember_workload)
        assert all(math.isfinite(v) for v in expected)
        assert actual == pytest.approx(expected, rel=rtol, abs=1e-6)


def test_gelu_erf_benchmark_cases_compute_the_same_values():
    """Every case of benchmarks/gelu_erf.py runs; the ember and general-path GELUs agree."""
    import numpy as np
    from benchmarks import gelu_erf
    x = np.random.default_rng(0).standard_normal((8, 16))
    cases = gelu_erf._cases(x)
    assert set(cases) == {"ember", "torch", "ember, general path"}
    for lib in cases.values():
        for case in lib.values():
            case()
    fast = ember.nn.functional.gelu(ember.tensor(x.astype(np.float32))).numpy()
    general = cases["ember, general path"]["gelu forward"]()
    np.testing.assert_allclose(fast, general, rtol=2e-6, atol=2e-6)


def test_profile_steps_prints_both_libraries(monkeypatch, capsys, ember_threads):
    from benchmarks import profile_steps
    monkeypatch.setattr(sys, "argv", ["profile_steps", "mlp", "--threads", "1", "--steps", "1",
                                      "--warmup", "1", "--rows", "3"])
    before = torch.get_num_threads()
    try:
        profile_steps.main()
    finally:
        torch.set_num_threads(before)
    out = capsys.readouterr().out
    assert "== torch: mlp" in out and "== ember: mlp" in out and "aten::addmm" in out


@pytest.mark.parametrize("layout", [[], ["--channels-last"]])
def test_batch_norm_kernels_prints_a_row_per_shape(layout, monkeypatch, capsys, ember_threads):
    from benchmarks import batch_norm_kernels
    monkeypatch.setattr(sys, "argv", ["batch_norm_kernels", "--repeats", "1", *layout])
    before = torch.get_num_threads()
    try:
        batch_norm_kernels.main()
    finally:
        torch.set_num_threads(before)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| (")]
    assert len(rows) == len(batch_norm_kernels.SHAPES)
    assert all(float(cell) > 0 for row in rows for cell in row.split("|")[2:4])


def test_picks_times_every_way():
    from benchmarks import picks
    if picks.openmp_kernels._function("gather_4") is None:
        pytest.skip("ember's loops cannot be built here")
    times = picks.row(3, 5, 10)
    assert len(times) == 6 and all(t > 0 for t in times)


def test_numpy_conv_paths_prints_a_row_per_model(monkeypatch, capsys, ember_threads):
    from benchmarks import numpy_conv_paths
    monkeypatch.setattr(sys, "argv", ["numpy_conv_paths", "--models", "lenet", "--rounds", "1"])
    numpy_conv_paths.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| lenet")]
    assert len(rows) == 1 and all(float(cell) > 0 for cell in rows[0].split("|")[2:5])
    assert numpy_conv_paths.depthwise.DEPTHWISE_ROWS and numpy_conv_paths.im2col.FUSED_BACKWARD


@pytest.mark.parametrize("chain", ["numbers", "tensors", "views"])
def test_overhead_chains_give_torchs_values_and_gradients(chain):
    from benchmarks import overhead
    import numpy as np
    results = []
    for lib in (torch, ember):
        x = lib.tensor(overhead.start_values(), requires_grad=True)
        if chain == "numbers":
            out = overhead.chain(x, lib.tanh).sum()
        elif chain == "tensors":
            m, a = lib.full((overhead.SIZE,), 0.9), lib.full((overhead.SIZE,), 0.05)
            out = overhead.tensor_chain(x, m, a, lib.tanh)
        else:
            out = overhead.view_chain(x.reshape(4, 4))
        out.backward()
        results.append((out.item(), x.grad.numpy().copy()))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)


@needs_onednn
def test_onednn_layers_times_every_library_and_restores_the_size_rules():
    """One repeat of a case from each group; torch, NumPy and ember's choice always run,
    oneDNN wherever it is in use, and the size rules set aside for oneDNN come back."""
    from benchmarks import onednn_layers
    from ember._backend import choice
    rules = [getattr(module, rule) for module, rule in onednn_layers.RULES]
    cases = {name: table[name] for table, name in (
        (onednn_layers.POOL, "MaxPool2d(2) 2x8x12x12"), (onednn_layers.SOFTMAX, "softmax 64x64"),
        (onednn_layers.NORM, "LayerNorm(128) 1x64x128"))}
    results = onednn_layers.measure(cases, repeats=1)
    assert [getattr(module, rule) for module, rule in onednn_layers.RULES] == rules
    for times in results.values():
        assert all(times[name] > 0 for name in ("torch", choice.NUMPY, "ember"))
        assert times[choice.ONEDNN] > 0 or not choice.enabled(choice.ONEDNN)


def test_onednn_reorders_counts_a_step_and_restores_the_runtime():
    """ResNet-20's 21 convolutions each run forward and backward-weights once per step, its
    reorders move bytes, and the runtime's execute path is the original again afterwards."""
    from benchmarks import onednn_reorders
    from ember._backend import choice
    from ember._backend.onednn import runtime
    if not choice.enabled(choice.ONEDNN):
        pytest.skip("oneDNN is not in use here")
    originals = runtime.Plan.__call__, runtime._Primitive.execute
    counts, peak_mb = onednn_reorders.count_model("resnet20", 1, batch=2)
    assert (runtime.Plan.__call__, runtime._Primitive.execute) == originals
    assert counts.runs["convolution forward"] == 21
    assert counts.runs["convolution backward weights"] == 21
    reorders = [kind for kind in counts.runs if kind.startswith("reorder")]
    assert reorders and all(counts.bytes[kind] > 0 for kind in reorders)
    assert peak_mb > 0


def test_gemm_threshold_prints_a_row_per_shape_and_restores_the_threshold(monkeypatch, capsys,
                                                                          ember_threads):
    from benchmarks import gemm_threshold
    from ember._backend import onednn
    if not onednn.available():
        pytest.skip("oneDNN is not installed here")
    monkeypatch.setattr(gemm_threshold, "SHAPES", [(4, 8, 4), (16, 16, 16)])
    monkeypatch.setattr(sys, "argv", ["gemm_threshold", "--repeats", "1", "--number", "1"])
    before = onednn.gemm.MIN_MULTIPLY_ADDS
    gemm_threshold.main()
    assert onednn.gemm.MIN_MULTIPLY_ADDS == before
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [row[0] for row in rows] == ["4x8x4", "16x16x16"]
    assert all(float(value) > 0 for row in rows for value in row[2:])


def test_op_speed_table_has_a_row_per_op_and_mode(tmp_path, capsys, ember_threads):
    """benchmarks/ops.py on three entries at the tiny size: a timed row per entry and mode
    (forward only for an entry without gradients), sorted by ratio, in the table and the JSON."""
    import json
    out, js = tmp_path / "ops.txt", tmp_path / "ops.json"
    before = torch.get_num_threads()
    try:
        from benchmarks import ops  # benchmarks/overhead.py, which it imports, sets torch's threads
        ops.main(["--only", "add", "--only", "sum", "--only", "argmax", "--sizes", "tiny", "--repeats", "1",
                  "--threads", "1", "--out", str(out), "--json", str(js), "--limit", "2"])
    finally:
        torch.set_num_threads(before)
    rows = json.loads(js.read_text())["rows"]
    assert {(r["op"], r["mode"]) for r in rows} == {
        ("add", "forward"), ("add", "forward+backward"), ("sum", "forward"), ("sum", "forward+backward"),
        ("argmax", "forward")}
    assert all(r["timed"] and r["ember_us"] > 0 and r["torch_us"] > 0 for r in rows)
    assert all(r["size"] == "tiny" and r["threads"] == 1 and r["dtype"] == "float32" for r in rows)
    assert [r["ratio"] for r in rows] == sorted((r["ratio"] for r in rows), reverse=True)
    lines = out.read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["ratio"])
    assert lines[head].split() == ["ratio", "ember", "µs", "torch", "µs", "op", "mode", "size", "thr", "shapes",
                                   "note"]
    assert len(lines) == head + 2 + len(rows)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == head + 2 + 2  # --limit 2


def test_op_profiles_name_each_slow_row_with_its_profile(tmp_path):
    """benchmarks/op_profiles.py on rows of a benchmarks.ops JSON: the rows over the threshold at the
    size, the worst first, each with its three largest own times (shares summing to at most 1), its
    calls and a reason by the module's rules; the rest left out."""
    import json
    from benchmarks import op_profiles
    row = {"size": "tiny", "threads": 1, "dtype": "float32", "shapes": "3x5", "elements": 15, "scaling": "all dims",
           "note": "", "timed": True}
    rows = [{**row, "op": "linalg.qr", "mode": "forward", "ratio": 3.0, "ember_us": 30.0, "torch_us": 10.0},
            {**row, "op": "add", "mode": "forward+backward", "ratio": 1.5, "ember_us": 6.0, "torch_us": 4.0},
            {**row, "op": "sum", "mode": "forward", "ratio": 0.5, "ember_us": 1.0, "torch_us": 2.0},
            {**row, "op": "add", "mode": "forward", "size": "medium", "ratio": 2.0, "ember_us": 2.0, "torch_us": 1.0}]
    js, out = tmp_path / "ops.json", tmp_path / "profiles.md"
    js.write_text(json.dumps({"header": [], "rows": rows}))
    op_profiles.main([str(js), "--calls", "20", "--out", str(out)])
    lines = out.read_text().splitlines()
    table = [line for line in lines if line.startswith("| `")]
    assert [line.split("|")[1].strip() for line in table] == ["`linalg.qr`", "`add`"]
    for line in table:
        cells = [c.strip() for c in line.split("|")[1:-1]]
        shares = [int(s) for s in re.findall(r"` (\d+)%", cells[6])]
        assert len(shares) == 3 and sum(shares) <= 101
        python_calls, c_calls, tensors = (float(c) for c in cells[5].split(","))
        assert python_calls > 0 and c_calls > 0 and tensors >= 0
        assert cells[7].split(" (")[0] in ("numpy.linalg", "ctypes", "NumPy Python", "compiled", "Python path",
                                           "Python path, with compiled functions")
    assert lines[-1].startswith("rows by reason: ")


@pytest.mark.parametrize("name, target, scaling, shapes", [
    ("add", 65_536, "all dims", [(222, 295), (222, 295)]),
    ("outer", 65_536, "all dims", [(222,), (296,)]),         # the output is the largest tensor
    ("view", 65_536, "shape arguments", [(222, 296)]),       # view's shape argument grows too
    ("cross", 65_536, "leading dim", [(21845, 3), (21845, 3)]),
    ("linalg.cross", 65_536, "fixed shape", [(3,), (3,)]),
])
def test_op_speed_cases_are_scaled_to_the_target(name, target, scaling, shapes):
    from benchmarks import ops
    (label, op), = ops.select(ops.entries(), [name])
    case = ops.Planner(label, op).case(target)
    assert (case.scaling, case.shapes) == (scaling, shapes)
    if scaling != "fixed shape":
        assert target / 1.1 < case.elements < target * 1.1


def test_scaled_index_values_stay_in_their_range():
    import numpy as np
    from benchmarks import ops
    from op_db import Arg
    rng = np.random.default_rng(0)
    index = ops.scaled_arg(Arg((), dtype="int64", values=[[0, 2], [1, 0]]), (40, 20), rng)
    assert index.values.shape == (40, 20) and set(np.unique(index.values)) == {0, 1, 2}
    mask = ops.scaled_arg(Arg((), dtype="bool", values=[True, False, False, False]), (1000,), rng)
    assert mask.values.dtype == bool and 0.15 < mask.values.mean() < 0.35


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_under_ember(name):
    """A program of benchmarks/programs/ trains 2 steps under ember, in its own process, to a
    finite loss."""
    from benchmarks.programs.__main__ import run_program
    result = run_program(name, "ember", steps=2, timeout=120)
    assert result["error"] is None, result["error"]
    assert result["steps"] == 2 and math.isfinite(result["loss"])


def test_programs_table_gives_ratios(monkeypatch, capsys, tmp_path):
    """python -m benchmarks.programs: medians per library, ratios, and a failure reported."""
    import json
    from benchmarks.programs import __main__ as programs
    walls = {("gpt_char", "ember"): iter([3.0, 5.0]), ("gpt_char", "torch"): iter([2.0, 2.0]),
             ("names_mlp", "ember"): iter([2.0, 2.0]), ("names_mlp", "torch"): iter([1.0, 1.0]),
             ("cnn_small", "torch"): iter([1.0, 1.0])}

    def fake(name, lib, steps=None, timeout=None):
        if name == "cnn_small" and lib == "ember":
            return {"wall_s": 0.5, "error": "AttributeError: no such thing"}
        wall = next(walls[name, lib])
        return {"wall_s": wall, "train_s": wall / 2, "loss": 1.5, "steps": 7, "error": None}
    monkeypatch.setattr(programs, "run_program", fake)
    programs.main(["--only", "gpt_char", "names_mlp", "cnn_small", "--repeats", "2",
                   "--json", str(tmp_path / "p.json")])
    rows = {r["program"]: r for r in json.loads((tmp_path / "p.json").read_text())}
    assert rows["gpt_char"]["ember_wall_s"] == 4.0 and rows["gpt_char"]["wall_ratio"] == 2.0
    assert rows["names_mlp"]["train_ratio"] == 2.0
    assert rows["cnn_small"]["wall_ratio"] is None and "AttributeError" in rows["cnn_small"]["ember_error"]
    out = capsys.readouterr().out
    assert "| gpt_char | 7 | 4.00 | 2.00 | 2.00 |" in out and "cnn_small under ember failed" in out


def test_overhead_counts_bytecodes_per_op():
    from benchmarks import overhead
    x = ember.tensor(overhead.start_values())
    count = overhead.bytecodes_per_op(lambda: overhead.chain(x, ember.tanh))
    assert 20 < count < 2000   # each op runs some of ember's Python, and not unboundedly much



def test_compile_steps_prints_a_row_per_model(capsys, ember_threads):
    """benchmarks/compile_steps.py times each variant of each model asked for, and the compiled
    models train through one CompiledFunctionBackward node."""
    from benchmarks import compile_steps
    before = torch.get_num_threads()
    try:
        compile_steps.main(["--models", "mlp,gpt_block", "--rounds", "1", "--no-torch-compile",
                            "--threads", "1"])
    finally:
        torch.set_num_threads(before)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1 thread(s) (torch: 1)"
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in lines[3:]}
    assert sorted(rows) == ["gpt_block", "mlp"]
    for cells in rows.values():
        times, torch_compile, node = cells[:5], cells[5], cells[6]
        assert all(float(t) > 0 for t in times) and torch_compile.strip() == "-"
        assert node.strip() == "CompiledFunctionBackward"


def test_vector_math_finds_an_ember_op_for_every_loop():
    """Each loop the benchmark times by default has the ember op that runs it (some activations
    live only in ``nn.functional``)."""
    from benchmarks import vector_math as bench
    from ember._backend import vector_math
    for op in (*vector_math.UNARY, *vector_math.WITH_PARAMETERS, *vector_math.BINARY, *vector_math.DIVISIONS):
        assert callable(bench._op(op, 16)), op
    for op in vector_math.GRADIENTS:
        assert callable(bench._ember_op(op)), op


def test_vector_math_prints_a_row_per_op_and_restores_the_size_rules(monkeypatch, capsys):
    from benchmarks import vector_math as bench
    from ember._backend import choice, vector_math
    if not (vector_math.available() and choice.enabled(choice.ONEDNN)):
        pytest.skip("the vector-math loops are not in use here")
    rules = dict(vector_math.MIN_ELEMENTS)
    monkeypatch.setattr(ember, "set_num_threads", lambda n: None)
    monkeypatch.setattr(sys, "argv", ["vector_math", "--ops", "sin", "sigmoid backward",
                                      "--sizes", "64", "--threads", "1", "--rounds", "1"])
    monkeypatch.setattr(bench, "_time", lambda fn, budget=0.0: (fn(), 1e-6)[1])
    bench.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| sin")
            or line.startswith("| sigmoid backward")]
    assert len(rows) == 2 and all("(1.00)" in row for row in rows)
    assert vector_math.MIN_ELEMENTS == rules


def test_index_select_benchmark_prints_a_row_per_shape(monkeypatch, capsys):
    from benchmarks import index_select as bench
    from ember._backend import openmp_kernels
    if openmp_kernels._function("index_select_float32") is None:
        pytest.skip("the OpenMP loops cannot be built here")
    monkeypatch.setattr(ember, "set_num_threads", lambda n: None)
    monkeypatch.setattr(bench, "SHAPES", ((20, 30),))
    monkeypatch.setattr(sys, "argv", ["index_select", "--threads", "1", "--number", "1",
                                      "--repeats", "1"])
    bench.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 1 and rows[0].count("(") == 2


@needs_onednn
def test_flip_benchmark_prints_a_row_per_shape(monkeypatch, capsys):
    from benchmarks import flip as bench
    from ember._backend import openmp_kernels
    if openmp_kernels._function("strided_rows_4") is None:
        pytest.skip("the OpenMP loops cannot be built here")
    monkeypatch.setattr(ember, "set_num_threads", lambda n: None)
    monkeypatch.setattr(bench, "SHAPES", ((64, 8), (128, 16)))
    monkeypatch.setattr(sys, "argv", ["flip", "--threads", "1", "--repeats", "1"])
    bench.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and all(row.count("(") == 1 for row in rows)
    assert openmp_kernels.REVERSED_ROWS_MIN_ELEMENTS == 1 << 15


def test_aligned_memory_benchmark_prints_a_row_per_model_and_reinstalls(capsys, ember_threads):
    from benchmarks import aligned_memory as bench
    from ember._backend import aligned_memory
    if not aligned_memory.installed():
        pytest.skip("ember's aligned handler cannot be built here")
    bench.main(["--threads", "1", "--models", "mlp", "--repeats", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| mlp |")]
    assert len(rows) == 1 and len(rows[0].split("|")) == 9
    assert aligned_memory.installed()


def test_functional_benchmark_times_every_case_on_both_libraries():
    from benchmarks import functional
    table = functional.measure(["mse_loss", "nll_loss"], repeats=1)
    assert set(table) == {(name, size) for name in ("mse_loss", "nll_loss") for size in functional.SIZES}
    assert all(set(times) == {"ember", "torch"} and min(times.values()) > 0 for times in table.values())


def test_cross_entropy_benchmark_prints_a_row_per_shape_and_restores_the_kernel(monkeypatch, capsys,
                                                                                ember_threads):
    from benchmarks import cross_entropy as bench
    from ember.nn.functional import loss
    choice, limit = loss._fused_cross_entropy, loss.FUSED_MAX_ELEMENTS
    monkeypatch.setattr(sys, "argv", ["cross_entropy", "--threads", "1", "--repeats", "1",
                                      "--shapes", "4x3", "5x7"])
    bench.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 4 x 3")
            or line.startswith("| 5 x 7")]
    assert len(rows) == 2
    assert loss._fused_cross_entropy is choice and loss.FUSED_MAX_ELEMENTS == limit


@needs_onednn
def test_softmax_rows_benchmark_prints_a_row_per_shape_and_restores_its_rules(monkeypatch, capsys):
    from benchmarks import softmax_rows as bench
    from ember._backend import vector_math
    if not vector_math.available():
        pytest.skip("the row loops cannot be built here")
    rules = vector_math.SOFTMAX_MIN_WIDTH, vector_math.SOFTMAX_NARROW_MAX_ELEMENTS
    monkeypatch.setattr(ember, "set_num_threads", lambda n: None)
    monkeypatch.setattr(bench, "SHAPES", ((3, 5), (40, 2)))
    monkeypatch.setattr(sys, "argv", ["softmax_rows", "--threads", "1", "--repeats", "1"])
    bench.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and all(row.count("(") == 2 for row in rows)
    assert (vector_math.SOFTMAX_MIN_WIDTH, vector_math.SOFTMAX_NARROW_MAX_ELEMENTS) == rules


def test_overhead_inplace_chain_gives_torchs_values():
    from benchmarks import overhead
    import numpy as np
    results = []
    for lib in (torch, ember):
        x = lib.tensor(overhead.start_values())
        m, a = lib.full((overhead.SIZE,), 0.9), lib.full((overhead.SIZE,), 0.05)
        out = overhead.inplace_chain(x, m, a)
        assert out is x
        results.append(x.numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
    assert ("forward", "ember") in overhead.cases_for("inplace")


def test_openmp_regions_benchmark_times_both_builds(capsys):
    """benchmarks/openmp_regions.py times the loop built with libgomp's region of one thread and with the
    serial branch, and the ctypes call alone."""
    from ember._inductor import _compiler
    if not _compiler.compiler_available():
        pytest.skip("no C compiler here")
    from benchmarks import openmp_regions
    openmp_regions.main(["--repeats", "1", "--elements", "4"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in lines[1:]] == ["region of one thread", "serial branch",
                                                            "ctypes call alone"]
    assert all(float(line.split()[-1]) > 0 for line in lines[1:])
