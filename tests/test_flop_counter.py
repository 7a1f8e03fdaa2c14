"""ember.utils.flop_counter.FlopCounterMode against torch's on the same models: totals and the
counts per module and op, forward and backward."""
import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

import ember
from ember import _flop_hook
from ember.utils import flop_counter
from ember.utils.flop_counter import FlopCounterMode


def _t(lib, shape, grad=False, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(data, dtype=lib.float32, requires_grad=grad)


def _counts(lib, mode_cls, build):
    run = build(lib)
    with mode_cls(display=False) as counter:
        run()
    return counter.get_total_flops(), {
        module: {str(op): n for op, n in ops.items()}
        for module, ops in counter.get_flop_counts().items()}


def _backward(out):
    out.sum().backward()


def _linear(bias=True, x_grad=False, shape=(3, 8)):
    def build(lib):
        m, x = lib.nn.Linear(8, 4, bias=bias), _t(lib, shape, x_grad)
        return lambda: _backward(m(x))
    return build


def _model(make, in_shape, x_grad=True, backward=True):
    def build(lib):
        m, x = make(lib), _t(lib, in_shape, x_grad)
        return (lambda: _backward(m(x))) if backward else (lambda: m(x))
    return build


def _attention(batch_first, x_grad):
    def build(lib):
        m = lib.nn.MultiheadAttention(16, 2, batch_first=batch_first)
        x = _t(lib, (2, 5, 16) if batch_first else (5, 2, 16), x_grad)
        return lambda: _backward(m(x, x, x)[0])
    return build


def _sdpa(q_grad, kv_grad, **kwargs):
    def build(lib):
        q = _t(lib, (2, 4, 5, 8), q_grad, 0)
        k = _t(lib, (2, 4, 6, 8), kv_grad, 1)
        v = _t(lib, (2, 4, 6, 7), kv_grad, 2)
        out = lambda: lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)  # noqa: E731
        return (lambda: _backward(out())) if q_grad or kv_grad else out
    return build


def _product(op, *shapes, grad=True):
    def build(lib):
        args = [_t(lib, s, grad, i) for i, s in enumerate(shapes)]
        fn = getattr(lib, op)
        return (lambda: _backward(fn(*args))) if grad else (lambda: fn(*args))
    return build


CASES = {
    "linear forward": _model(lambda lib: lib.nn.Linear(8, 4), (3, 8), False, False),
    "linear": _linear(),
    "linear, input grad": _linear(x_grad=True),
    "linear, 3-d input": _linear(x_grad=True, shape=(2, 3, 8)),
    "linear, no bias": _linear(bias=False),
    "nested sequential": _model(lambda lib: lib.nn.Sequential(
        lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Linear(16, 4))), (3, 8)),
    "conv2d forward": _model(lambda lib: lib.nn.Conv2d(3, 5, 3, stride=2, padding=1),
                             (2, 3, 9, 9), backward=False),
    "conv2d": _model(lambda lib: lib.nn.Conv2d(3, 5, 3, stride=2, padding=1), (2, 3, 9, 9)),
    "conv2d, weight grad only": _model(lambda lib: lib.nn.Conv2d(3, 5, 3, padding=1),
                                       (2, 3, 9, 9), x_grad=False),
    "conv_transpose2d": _model(lambda lib: lib.nn.ConvTranspose2d(3, 5, 3, stride=2),
                               (2, 3, 9, 9)),
    "conv1d groups": _model(lambda lib: lib.nn.Conv1d(3, 6, 3, groups=3), (2, 3, 10), False),
    "conv3d unbatched": _model(lambda lib: lib.nn.Conv3d(2, 3, 2), (2, 4, 4, 4)),
    "conv net": _model(lambda lib: lib.nn.Sequential(
        lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(4 * 6 * 6, 5)),
        (2, 3, 8, 8)),
    "sdpa forward": _sdpa(False, False),
    "sdpa causal forward": _sdpa(False, False, is_causal=True),
    "sdpa": _sdpa(True, True),
    "sdpa, query grad only": _sdpa(True, False),
    "multihead attention, input grad": _attention(batch_first=False, x_grad=True),
    "mm": _product("mm", (4, 5), (5, 6)),
    "mm forward": _product("mm", (4, 5), (5, 6), grad=False),
    "bmm": _product("bmm", (3, 4, 5), (3, 5, 6)),
    "addmm": _product("addmm", (4, 6), (4, 5), (5, 6)),
    "baddbmm": _product("baddbmm", (3, 4, 6), (3, 4, 5), (3, 5, 6)),
    "matmul 2-d": _product("matmul", (4, 5), (5, 6)),
    "matmul 3-d @ 2-d": _product("matmul", (3, 4, 5), (5, 6)),
    "matmul 4-d @ 4-d": _product("matmul", (2, 3, 4, 5), (2, 3, 5, 6)),
    "matmul broadcast": _product("matmul", (2, 3, 4, 5), (3, 5, 6)),
    "matmul 2-d @ 3-d forward": _product("matmul", (4, 5), (3, 5, 6), grad=False),
    "matmul 1-d @ 2-d": _product("matmul", (5,), (5, 6)),
    "matmul 2-d @ 1-d (mv: not counted)": _product("matmul", (4, 5), (5,)),
    "matmul 3-d @ 1-d (folded mv)": _product("matmul", (3, 4, 5), (5,)),
    "mv": _product("mv", (4, 5), (5,)),
    "dot": _product("dot", (5,), (5,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_counts_match_torch(name):
    expected = _counts(torch, TorchFlopCounterMode, CASES[name])
    assert _counts(ember, FlopCounterMode, CASES[name]) == expected


@pytest.mark.parametrize("build", [
    _attention(batch_first=True, x_grad=False),
    _product("matmul", (4, 5), (3, 5, 6)),
])
def test_totals_match_torch_where_the_op_mix_differs(build):
    """torch runs MultiheadAttention's batch-first input projection as matmul + add (mm) where
    ember runs addmm, and folds a 2-d @ 3-d product with gradients into one mm where ember
    runs bmm: the same FLOPs under other names."""
    t_total, t_counts = _counts(torch, TorchFlopCounterMode, build)
    e_total, e_counts = _counts(ember, FlopCounterMode, build)
    assert e_total == t_total
    assert set(e_counts) == set(t_counts)
    for module in t_counts:
        assert sum(e_counts[module].values()) == sum(t_counts[module].values())


def test_nested_modules_forward_then_backward_outside_the_mode():
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.Linear(16, 4))
    x = ember.ones(3, 8)
    with FlopCounterMode(display=False) as counter:
        out = model(x)
    forward = counter.get_flop_counts()
    assert forward["Sequential.1"] == {"aten.addmm": 3 * 4 * 2 * 16}
    out.sum().backward()  # outside the mode: nothing more counted
    assert counter.get_flop_counts() == forward
    assert model[0].weight.grad is not None


def test_counter_reset_on_reentry_and_cleared_hook():
    a, b = ember.ones(4, 5), ember.ones(5, 6)
    counter = FlopCounterMode(display=False)
    with counter:
        ember.mm(a, b)
    with counter:
        ember.mm(a, b)
    assert counter.get_total_flops() == 240
    assert _flop_hook.counter is None
    with pytest.raises(ValueError, match="boom"):
        with counter:
            raise ValueError("boom")
    assert _flop_hook.counter is None


def test_nothing_is_attached_when_no_counter_is_active():
    a = ember.ones(4, 5, requires_grad=True)
    out = ember.mm(a, ember.ones(5, 6))
    assert _flop_hook.counter is None
    assert not out.grad_fn._has_hooks
    conv = ember.nn.Conv2d(2, 3, 3)
    assert not conv(ember.ones(1, 2, 5, 5)).grad_fn._has_hooks
    from ember.nn.modules import module
    assert not module._global_forward_pre_hooks and not module._global_forward_hooks


def test_table_format():
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(),
                                ember.nn.Sequential(ember.nn.Linear(16, 4)))
    with FlopCounterMode(display=False) as counter:
        model(ember.ones(3, 8, requires_grad=True)).sum().backward()
        ember.mm(ember.ones(100, 100), ember.ones(100, 100))
    assert counter.get_table(1).splitlines() == [
        "Module               FLOP    % Total",
        "--------------  ---------  ---------",
        "Global          2003.456K    100.00%",
        " - aten.addmm      1.152K      0.06%",
        " - aten.mm      2002.304K     99.94%",
        " Sequential        3.456K      0.17%",
        "  - aten.addmm     1.152K      0.06%",
        "  - aten.mm        2.304K      0.12%",
    ]
    deep = counter.get_table(3).splitlines()
    assert [line.split()[0] for line in deep[2:] if not line.strip().startswith("-")] == [
        "Global", "Sequential", "Sequential.0", "Sequential.2", "Sequential.2.0"]
    assert deep[-1] == "    - aten.mm         0.768K      0.04%"
    with FlopCounterMode(display=False) as empty:
        pass
    assert empty.get_table().splitlines() == ["Module      FLOP    % Total",
                                              "--------  ------  ---------",
                                              "Global         0         0%"]


def test_display_prints_the_table(capsys):
    with FlopCounterMode() as counter:
        ember.mm(ember.ones(2, 3), ember.ones(3, 4))
    assert capsys.readouterr().out == counter.get_table() + "\n"
    assert "Global" in counter.get_table() and "aten.mm" in counter.get_table()


def test_custom_mapping_and_mods_warning():
    def one_per_call(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 1

    with pytest.warns(UserWarning, match="mods argument is not needed"):
        counter = FlopCounterMode(ember.nn.Linear(2, 2), display=False,
                                  custom_mapping={"aten.mm": one_per_call})
    with counter:
        ember.mm(ember.ones(4, 5), ember.ones(5, 6))
        ember.bmm(ember.ones(2, 4, 5), ember.ones(2, 5, 6))
    assert counter.get_flop_counts()["Global"] == {"aten.mm": 1, "aten.bmm": 480}


def test_formulas_match_torch():
    from torch.utils import flop_counter as tfc
    assert flop_counter.mm_flop((4, 5), (5, 6)) == tfc.mm_flop((4, 5), (5, 6))
    assert flop_counter.conv_flop_count([2, 3, 9, 9], [5, 3, 3, 3], [2, 5, 5, 5]) == \
        tfc.conv_flop_count([2, 3, 9, 9], [5, 3, 3, 3], [2, 5, 5, 5])
    assert flop_counter.sdpa_flop_count((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 7)) == \
        tfc.sdpa_flop_count((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 7))
    for n in (0, 7, 999, 1000, 123456, 10 ** 9, 1010 ** 3, 10 ** 13, 10 ** 16):
        assert flop_counter.get_suffix_str(n) == tfc.get_suffix_str(n)
        suffix = tfc.get_suffix_str(n)
        assert flop_counter.convert_num_with_suffix(n, suffix) == \
            tfc.convert_num_with_suffix(n, suffix)
    with pytest.raises(AssertionError, match="inner dimensions must match"):
        flop_counter.mm_flop((4, 5), (6, 7))


def test_register_flop_formula():
    @flop_counter.register_flop_formula("test.my_op")
    def my_op_flop(a_shape, out_shape=None):
        return 7

    try:
        assert flop_counter.flop_registry["test.my_op"] is my_op_flop
        with pytest.raises(RuntimeError, match="duplicate registrations for test.my_op"):
            flop_counter.register_flop_formula("test.my_op")(my_op_flop)
        with pytest.raises(ValueError, match="expected each target"):
            flop_counter.register_flop_formula([3])(my_op_flop)
    finally:
        del flop_counter.flop_registry["test.my_op"]


def test_global_module_hooks():
    from ember.nn.modules.module import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
    seen = []
    pre = register_module_forward_pre_hook(lambda m, args: seen.append(("pre", type(m).__name__)))
    post = register_module_forward_hook(
        lambda m, args, out: out * 2 if isinstance(m, ember.nn.Identity) else None)
    try:
        out = ember.nn.Sequential(ember.nn.Identity())(ember.ones(2))
    finally:
        pre.remove()
        post.remove()
    assert seen == [("pre", "Sequential"), ("pre", "Identity")]
    assert out.tolist() == [2.0, 2.0]
    assert ember.nn.Identity()(ember.ones(2)).tolist() == [1.0, 1.0]


def test_reachable_from_import_ember():
    assert ember.utils.flop_counter.FlopCounterMode is FlopCounterMode
    assert set(flop_counter.__all__) == {"FlopCounterMode", "register_flop_formula"}


def test_table_of_small_counts_shows_plain_numbers():
    with FlopCounterMode(display=False) as counter:
        ember.mm(ember.ones(4, 5), ember.ones(5, 6))
        ember.nn.Linear(5, 3)(ember.ones(2, 5))
    assert counter.get_table().splitlines() == [
        "Module            FLOP    % Total",
        "--------------  ------  ---------",
        "Global             300    100.00%",
        " - aten.mm         240     80.00%",
        " - aten.addmm       60     20.00%",
        " Linear             60     20.00%",
        "  - aten.addmm      60     20.00%",
    ]
