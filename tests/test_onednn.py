"""ember's oneDNN kernel layer: convolutions forward and backward against torch (whose CPU
convolutions run the same library: bit for bit where it picks the same primitive), pooling,
softmax, layer norm and activations against torch, the plan cache, the switch and the fallback to NumPy,
and oneDNN's errors."""
import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember._backend import choice, onednn, openmp_kernels, products
from ember._backend.onednn import capi, runtime

needs_openmp_loops = pytest.mark.skipif(
    not openmp_kernels.available(), reason="no C compiler: ember's OpenMP loops cannot be built here")

pytestmark = pytest.mark.skipif(not choice.enabled(choice.ONEDNN),
                                reason="oneDNN is not in use (not installed, or EMBER_ONEDNN=0)")

# (x shape, w shape, kwargs) for conv{1,2,3}d
CONV_CASES = [
    ((4, 16, 12, 12), (16, 16, 3, 3), dict(padding=1)),                       # ResNet's 3x3
    ((4, 16, 12, 12), (32, 16, 1, 1), dict(stride=2)),                         # 1x1 downsample
    ((3, 3, 17, 15), (8, 3, 5, 5), dict(stride=2, padding=2)),
    ((2, 6, 11, 10), (6, 3, 3, 3), dict(padding=(1, 0), groups=2)),
    ((2, 8, 10, 10), (8, 1, 3, 3), dict(padding=1, groups=8)),                 # depthwise
    ((2, 4, 12, 12), (6, 4, 3, 3), dict(padding=2, dilation=2)),
    ((2, 4, 9, 9), (6, 4, 3, 2), dict(padding="same")),                        # asymmetric pads
    ((2, 5, 20), (7, 5, 3), dict(stride=2, padding=1)),                        # 1-D
    ((1, 3, 6, 7, 5), (4, 3, 3, 3, 2), dict(padding=1, stride=(1, 2, 1))),     # 3-D
]

# (x shape, w shape, kwargs) for conv_transpose{1,2,3}d
TRANSPOSED_CASES = [
    ((3, 16, 5, 4), (16, 8, 4, 4), dict(stride=2, padding=1)),                 # DCGAN's
    ((2, 6, 5, 5), (6, 4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((2, 4, 6, 6), (4, 3, 3, 3), dict(stride=2, groups=2, dilation=2, output_padding=1)),
    ((2, 5, 9), (5, 3, 4), dict(stride=3, padding=1, output_padding=2)),
    ((1, 4, 3, 4, 3), (4, 2, 3, 3, 3), dict(stride=2, padding=1)),
]


def _dims(x_shape):
    return len(x_shape) - 2


def _run(lib, transposed, x_data, w_data, b_data, g_data, kwargs, layout=None):
    F = lib.nn.functional
    fn = getattr(F, f"conv{'_transpose' if transposed else ''}{_dims(x_data.shape)}d")
    x = lib.tensor(x_data, requires_grad=True)
    w = lib.tensor(w_data, requires_grad=True)
    b = lib.tensor(b_data, requires_grad=True)
    xin = layout(x) if layout else x
    y = fn(xin, w, b, **kwargs)
    y.backward(lib.tensor(g_data))
    return [t.detach().numpy() for t in (y, x.grad, w.grad, b.grad)]


def _data(x_shape, w_shape, kwargs, transposed, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    out_channels = w_shape[1] * kwargs.get("groups", 1) if transposed else w_shape[0]
    b = rng.standard_normal(out_channels).astype(np.float32)
    F = torch.nn.functional
    fn = getattr(F, f"conv{'_transpose' if transposed else ''}{_dims(x_shape)}d")
    y = fn(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kwargs)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    return x, w, b, g


def _compare(got, want):
    names = ("output", "input grad", "weight grad", "bias grad")
    for name, a, b in zip(names, got, want):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(b).max()),
                                   err_msg=name)


@pytest.mark.parametrize("transposed, x_shape, w_shape, kwargs",
                         [(False,) + c for c in CONV_CASES] + [(True,) + c for c in TRANSPOSED_CASES])
def test_convolutions_on_onednn_match_torch(transposed, x_shape, w_shape, kwargs):
    data = _data(x_shape, w_shape, kwargs, transposed)
    want = _run(torch, transposed, *data, kwargs)
    with choice.only(choice.ONEDNN):
        got = _run(ember, transposed, *data, kwargs)
    _compare(got, want)


def test_resnet_convolution_is_bit_identical_to_torch():
    """torch runs the same oneDNN primitive for this float32 convolution."""
    x, w, b, g = _data((8, 16, 16, 16), (16, 16, 3, 3), dict(padding=1), False)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=1)
    with choice.only(choice.ONEDNN):
        got = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w), ember.tensor(b),
                                         padding=1)
    assert np.array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("layout", ["transposed_view", "channels_last", "sliced"])
def test_strided_inputs_are_read_in_place_and_match_torch(layout):
    x_shape, w_shape, kwargs = CONV_CASES[0]
    views = {"transposed_view": lambda t: t.transpose(2, 3),
             "channels_last": lambda t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
             "sliced": lambda t: t[:, :, ::2, 1:]}
    x, w, b, _ = _data(x_shape, w_shape, kwargs, False)
    F = torch.nn.functional
    y = F.conv2d(views[layout](torch.tensor(x)), torch.tensor(w), torch.tensor(b), **kwargs)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)
    want = _run(torch, False, x, w, b, g, kwargs, views[layout])
    with choice.only(choice.ONEDNN):
        got = _run(ember, False, x, w, b, g, kwargs, views[layout])
    _compare(got, want)


def test_a_repeated_step_creates_no_primitives():
    x, w, b, g = _data((4, 8, 10, 10), (8, 8, 3, 3), dict(padding=1, stride=1), False, seed=3)
    _run(ember, False, x, w, b, g, dict(padding=1))
    created = runtime.plans.created
    for _ in range(3):
        _run(ember, False, x, w, b, g, dict(padding=1))
    assert runtime.plans.created == created


def test_a_repeated_step_creates_no_memory_objects(monkeypatch):
    """Each primitive binds its arguments with memory objects made on first use."""
    x, w, b, g = _data((4, 8, 10, 10), (8, 8, 3, 3), dict(padding=1, stride=1), False, seed=3)
    _run(ember, False, x, w, b, g, dict(padding=1))
    made = []
    memory = runtime._memory
    monkeypatch.setattr(runtime, "_memory", lambda md, pointer: made.append(md) or memory(md, pointer))
    first = _run(ember, False, x, w, b, g, dict(padding=1))
    second = _run(ember, False, x, w, b, g, dict(padding=1))
    assert made == []
    for a, c in zip(first, second):
        assert np.array_equal(a, c)


def test_threads_running_one_primitive_at_once_each_get_their_own_results():
    """Two threads running the same cached plan at the same time: the second binds memory
    objects of its own (the plan's are the first's until it is done)."""
    import threading
    x, w, b, _ = _data((8, 16, 16, 16), (16, 16, 3, 3), dict(padding=1), False)
    inputs = [x * scale for scale in (1.0, -2.0, 0.5, 3.0)]
    want = [torch.nn.functional.conv2d(torch.tensor(i), torch.tensor(w), padding=1).numpy()
            for i in inputs]
    weight = ember.tensor(w)
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                with choice.only(choice.ONEDNN):
                    out = ember.nn.functional.conv2d(ember.tensor(inputs[k]), weight, padding=1)
                results.setdefault(k, []).append(out.numpy())
        except BaseException as error:   # reported below
            errors.append(error)
    workers = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors
    for k, outs in results.items():
        assert len(outs) == 20
        for out in outs:
            np.testing.assert_allclose(out, want[k], rtol=1e-4, atol=1e-4 * np.abs(want[k]).max())


def _reorders_run(monkeypatch):
    """A list that gets the name of each reorder oneDNN runs from now on."""
    runs = []
    execute = runtime._Primitive.execute

    def counted(primitive, args):
        if primitive.what.startswith("reorder"):
            runs.append(primitive.what)
        execute(primitive, args)
    monkeypatch.setattr(runtime._Primitive, "execute", counted)
    return runs


def _without_shared_reorders(monkeypatch):
    monkeypatch.setattr(runtime.Reordered, "find", lambda self, array, md: None)


@pytest.mark.parametrize("transposed, x_shape, w_shape, kwargs",
                         [(False,) + c for c in CONV_CASES] + [(True,) + c for c in TRANSPOSED_CASES])
def test_backward_sharing_a_reorder_gives_the_bits_of_separate_reorders(
        transposed, x_shape, w_shape, kwargs, monkeypatch):
    """The output gradient (a transposed convolution's input) converted once for both of
    the backward's primitives gives what converting it for each gave."""
    data = _data(x_shape, w_shape, kwargs, transposed)
    with choice.only(choice.ONEDNN):
        shared = _run(ember, transposed, *data, kwargs)
        _without_shared_reorders(monkeypatch)
        separate = _run(ember, transposed, *data, kwargs)
    for a, b in zip(shared, separate):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("transposed", [False, True])
def test_backward_converts_the_shared_array_once(transposed, monkeypatch):
    x_shape, w_shape, kwargs = ((4, 32, 8, 8), (32, 16, 4, 4), dict(stride=2, padding=1)) \
        if transposed else CONV_CASES[0]
    data = _data(x_shape, w_shape, kwargs, transposed)
    _run(ember, transposed, *data, kwargs)   # plans made
    runs = _reorders_run(monkeypatch)
    _run(ember, transposed, *data, kwargs)
    shared = list(runs)
    _without_shared_reorders(monkeypatch)
    runs.clear()
    _run(ember, transposed, *data, kwargs)
    assert len(shared) == len(runs) - 1
    assert runs.count("reorder for convolution backward weights") == \
        shared.count("reorder for convolution backward weights") + 1


def test_training_steps_with_shared_reorders_give_the_same_bits(monkeypatch):
    """Steps of SGD (weights updated in place between them) on a small conv net, with each
    backward's shared reorders and without."""
    def train():
        ember.manual_seed(0)
        nn = ember.nn
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                              nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                              nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1))
        optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = ember.tensor(np.random.default_rng(0).standard_normal((4, 3, 12, 12),
                                                                  dtype=np.float32))
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    losses, weights = train()
    _without_shared_reorders(monkeypatch)
    want_losses, want_weights = train()
    assert losses == want_losses
    for a, b in zip(weights, want_weights):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_dtypes_onednn_does_not_run_fall_back_to_numpy(dtype):
    x = ember.randn(2, 3, 8, 8, dtype=getattr(ember, dtype))
    w = ember.randn(4, 3, 3, 3, dtype=getattr(ember, dtype))
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        ember.nn.functional.conv2d(x, w)
    got = ember.nn.functional.conv2d(x, w)  # the choice falls back to NumPy
    want = torch.nn.functional.conv2d(torch.tensor(x.float().numpy()).to(getattr(torch, dtype)),
                                      torch.tensor(w.float().numpy()).to(getattr(torch, dtype)))
    assert str(got.dtype) == f"ember.{dtype}"
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=5e-2)


def test_the_switch_turns_onednn_off_and_on():
    x, w = ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3)
    created = runtime.plans.created
    with ember.backends.mkldnn.flags(enabled=False):
        assert not ember.backends.mkldnn.enabled
        ember.nn.functional.conv2d(x, w, padding=(2, 1))
        assert runtime.plans.created == created
    assert ember.backends.mkldnn.enabled and ember.backends.mkldnn.is_available()
    ember.nn.functional.conv2d(x, w, padding=(2, 1))
    assert runtime.plans.created == created + 1


def test_environment_variable_turns_onednn_off():
    code = ("import ember; from ember._backend.onednn import runtime; "
            "ember.nn.functional.conv2d(ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3)); "
            "print(ember.backends.mkldnn.enabled, ember.backends.mkldnn.is_available(), "
            "runtime.plans.created)")
    env = dict(os.environ, EMBER_ONEDNN="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "0"]


def test_importing_ember_loads_no_onednn_and_sets_no_threads():
    code = ("import sys, ember; from ember._backend.onednn import capi; "
            "print(bool(capi._loaded), 'libgomp' in open('/proc/self/maps').read())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_onednn_errors_name_the_call_the_primitive_and_the_status():
    bad = runtime.MemoryDesc.any((2, 3, 4, 4), np.dtype(np.float32))
    wrong_weights = runtime.MemoryDesc.any((5, 7, 3, 3), np.dtype(np.float32))  # 7 != 3 channels
    dst = runtime.MemoryDesc.any((2, 5, 2, 2), np.dtype(np.float32))
    geometry = tuple(capi.dims(v) for v in ((1, 1), (0, 0), (0, 0), (0, 0)))
    with pytest.raises(capi.OneDNNError, match=r"dnnl_convolution_forward_primitive_desc_create "
                                               r"failed for convolution forward: invalid_arguments"):
        onednn.conv._forward_pd(bad, wrong_weights, None, dst, geometry, capi.FORWARD_TRAINING,
                                None)


def test_threads_follow_set_num_threads():
    previous = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        ember.nn.functional.conv2d(ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3))
        assert onednn.threads._applied.count == 1
    finally:
        ember.set_num_threads(previous)
    ember.nn.functional.conv2d(ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3))
    assert onednn.threads._applied.count == previous


def test_a_new_thread_count_gets_its_own_primitives():
    """A primitive splits its work for the thread count it was created under: after
    ``set_num_threads`` a step creates primitives for the new count (reusing the old ones ran
    2 threads no faster than 1), and going back reuses the first ones."""
    previous = ember.get_num_threads()
    x, w = ember.randn(2, 3, 9, 9), ember.randn(4, 3, 3, 3)
    try:
        ember.set_num_threads(1)
        want = ember.nn.functional.conv2d(x, w).numpy()
        created = runtime.plans.created
        ember.set_num_threads(2)
        np.testing.assert_allclose(ember.nn.functional.conv2d(x, w).numpy(), want, rtol=1e-5, atol=1e-5)
        after_switch = runtime.plans.created
        ember.set_num_threads(1)
        ember.nn.functional.conv2d(x, w)
        assert after_switch > created and runtime.plans.created == after_switch
    finally:
        ember.set_num_threads(previous)


def test_a_forked_child_runs_convolutions_after_the_parent_did():
    """GNU OpenMP's pool does not survive fork: the child must not reuse the parent's threads
    or its primitives (which keep their thread count), or it hangs."""
    code = ("import os, ember\n"
            "x, w = ember.randn(8, 16, 32, 32), ember.randn(16, 16, 3, 3)\n"
            "want = ember.nn.functional.conv2d(x, w, padding=1)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    y = ember.nn.functional.conv2d(x, w, padding=1)\n"
            "    os._exit(0 if bool((y == want).all()) else 3)\n"
            "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["0"]


def _batch_norm_run(lib, shape, affine, training, fmt):
    rng = np.random.default_rng(2)
    channels = shape[1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    w, b = rng.standard_normal(channels).astype(np.float32), rng.standard_normal(channels).astype(np.float32)
    stats = rng.standard_normal(channels).astype(np.float32), rng.uniform(0.5, 2, channels).astype(np.float32)
    m = getattr(lib.nn, f"BatchNorm{max(1, len(shape) - 2)}d")(channels, affine=affine)
    if affine:
        m.weight.data.copy_(lib.tensor(w))
        m.bias.data.copy_(lib.tensor(b))
    m.running_mean.copy_(lib.tensor(stats[0]))
    m.running_var.copy_(lib.tensor(stats[1]))
    m.train(training)
    layout = getattr(lib, fmt)
    xt = lib.tensor(x).contiguous(memory_format=layout).requires_grad_()
    y = m(xt)
    y.backward(lib.tensor(g).contiguous(memory_format=layout))
    assert y.is_contiguous(memory_format=layout)
    out = [m(xt.detach()).detach(), xt.grad, m.running_mean, m.running_var]
    if affine:
        out += [m.weight.grad, m.bias.grad]
    return [t.numpy() for t in out]


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape, affine, fmt", [((8, 16, 10, 10), True, "channels_last"),
                                                ((4, 32, 7, 5), False, "channels_last"),
                                                ((2, 16, 4, 5, 3), True, "channels_last_3d")])
def test_channels_last_batch_norm_on_onednn_matches_torch(shape, affine, fmt, training):
    want = _batch_norm_run(torch, shape, affine, training, fmt)
    with choice.only(choice.ONEDNN):
        got = _batch_norm_run(ember, shape, affine, training, fmt)
    for i, (a, b_) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(b_).max()),
                                   err_msg=f"output {i}")


@needs_openmp_loops
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape, affine", [((8, 16, 10, 10), True), ((4, 3, 7), False),
                                           ((2, 5, 4, 3, 2), True), ((3, 2, 1, 1), True)])
def test_row_major_batch_norm_runs_on_the_openmp_loop(shape, affine, training):
    """oneDNN has only generic C++ loops (``ncsp_bnorm:any``) for row-major batch norm, slower
    than NumPy's path: the choice declines them and runs ember's OpenMP loop
    (``_backend/openmp_kernels.py``) on the same threads."""
    want = _batch_norm_run(torch, shape, affine, training, "contiguous_format")
    with choice.only(choice.ONEDNN):
        got = _batch_norm_run(ember, shape, affine, training, "contiguous_format")
    for a, b_ in zip(got, want):
        np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(b_).max()))


def test_row_major_batch_norm_without_the_openmp_loop_runs_on_numpy(monkeypatch):
    """Where the loop cannot be built (no C compiler), NumPy's path runs."""
    from ember._backend import openmp_kernels
    monkeypatch.setattr(openmp_kernels, "_functions", {"batch_norm_forward": None,
                                                       "batch_norm_backward": None})
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _batch_norm_run(ember, (8, 16, 10, 10), True, True, "contiguous_format")
    want = _batch_norm_run(torch, (8, 16, 10, 10), True, True, "contiguous_format")
    got = _batch_norm_run(ember, (8, 16, 10, 10), True, True, "contiguous_format")
    for a, b_ in zip(got, want):
        np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(b_).max()))


def test_a_declined_case_is_not_tried_again():
    """The plan cache keeps oneDNN's refusal (row-major batch norm) as well as its plans."""
    _batch_norm_run(ember, (8, 16, 10, 10), True, True, "contiguous_format")
    created = runtime.plans.created
    _batch_norm_run(ember, (8, 16, 10, 10), True, True, "contiguous_format")
    assert runtime.plans.created == created


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True),
                                                      (True, True)])
@pytest.mark.parametrize("m, k, n", [(128, 784, 512), (700, 256, 100), (64, 2000, 33)])
def test_gemm_matches_numpy_for_each_operand_layout(m, k, n, transpose_a, transpose_b):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    a, b = (a.T if transpose_a else a), (b.T if transpose_b else b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(onednn.gemm.matmul(a, b), want, rtol=1e-4, atol=1e-3)
    bias = rng.standard_normal(n).astype(np.float32)
    out = np.empty((m, n), np.float32)
    out[...] = bias
    assert onednn.gemm.matmul(a, b, out) is out
    np.testing.assert_allclose(out, want + bias, rtol=1e-4, atol=1e-3)


def test_gemm_declines_what_it_does_not_run():
    f32 = np.ones((64, 64), np.float32)
    assert onednn.gemm.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)) is None
    assert onednn.gemm.matmul(f32.astype(np.float64), f32.astype(np.float64)) is None
    assert onednn.gemm.matmul(np.ones((64, 128), np.float32)[:, ::2], f32) is None
    assert onednn.gemm.matmul(f32, f32, out=f32) is None  # overlaps an operand


@pytest.mark.parametrize("library", ["onednn", "numpy"])
@pytest.mark.parametrize("channels_last", [False, True])
def test_conv_bias_gradient_from_the_weight_gradients_primitive_matches_torch(library, channels_last,
                                                                             spy):
    """A convolution's bias gradient comes out of the backward call with the weight's (oneDNN's
    backward-weights primitive, as torch's; NumPy's channel sums) and matches torch's."""
    asked_for_bias = spy(onednn.conv, "conv_backward_weights", 8)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 6, 14, 14)).astype(np.float32)
    results, state = [], None
    for lib in (torch, ember):   # torch first: ember loads its initial weights
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(6, 16, 5, padding=2)
        if lib is ember:
            conv.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in state.items()})
        else:
            state = conv.state_dict()
        xt = lib.tensor(x, requires_grad=True)
        if channels_last:
            conv = conv.to(memory_format=lib.channels_last)
            xt = xt.contiguous(memory_format=lib.channels_last)
        with choice.only(library) if lib is ember else contextlib.nullcontext():
            conv(xt).pow(2).sum().backward()
        results.append([t.grad.detach().numpy() for t in (conv.bias, conv.weight)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert asked_for_bias == ([True] if library == "onednn" else [])


BATCHED_CASES = [((64, 64, 32), (64, 32, 64)), ((4, 16, 64, 32), (4, 16, 32, 64)),
                 ((4, 1, 64, 32), (1, 16, 32, 64)), ((64, 32), (8, 32, 512)),
                 ((16, 128, 96), (1, 96, 128))]


@pytest.fixture
def onednn_threads():
    """``onednn_threads(n)`` sets ember's thread count (oneDNN's OpenMP threads) for the test."""
    before = ember.get_num_threads()
    yield ember.set_num_threads
    ember.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape_a, shape_b", BATCHED_CASES)
def test_batched_matmul_on_the_primitive_matches_torch(shape_a, shape_b, threads, onednn_threads,
                                                       monkeypatch, spy):
    """Batched products (broadcast batch dimensions, a transposed right operand, a 2-D one) on
    oneDNN's matmul primitive, forward and backward, against torch."""
    onednn_threads(threads)
    monkeypatch.setattr(onednn.gemm, "BATCHED_ONE_THREAD_MIN_MULTIPLY_ADDS", 0)
    calls = spy(onednn.gemm, "batched_matmul")
    rng = np.random.default_rng(6)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = np.swapaxes(rng.standard_normal(shape_b[:-2] + shape_b[:-3:-1]).astype(np.float32), -1, -2)
    results = []
    for lib in (torch, ember):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        if lib is ember:
            y = ember.tensor(np.ascontiguousarray(np.swapaxes(b, -1, -2)),
                             requires_grad=True).transpose(-1, -2)   # a transposed view
        out = x @ y
        out.pow(2).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert calls   # the forward product at least ran on the primitive


def test_batched_matmul_declines_what_it_does_not_run(onednn_threads):
    onednn_threads(2)
    f32 = np.ones((8, 64, 64), np.float32)
    assert onednn.gemm.batched_matmul(np.ones((2, 4, 4), np.float32), np.ones((2, 4, 4), np.float32)) is None
    assert onednn.gemm.batched_matmul(f32.astype(np.float64), f32.astype(np.float64)) is None
    assert onednn.gemm.batched_matmul(f32, np.ones((3, 64, 64), np.float32)) is None   # batches differ
    assert onednn.gemm.batched_matmul(f32[:, ::-1], f32) is None   # a reversed view
    assert onednn.gemm.batched_matmul(f32[0], f32[0]) is None   # 2-D: the GEMM's
    assert onednn.gemm.batched_matmul(f32, f32, out=np.empty((8, 64, 63), np.float32)) is None
    assert onednn.gemm.batched_matmul(f32, f32, out=f32) is None   # overlaps an operand


def test_batched_matmul_takes_packed_attention_heads_and_writes_into_out(onednn_threads):
    """The heads of a packed (N, L, 3E) projection, strided across the batch, run on the
    primitive (oneDNN's GEMM-based matmul takes them) at two threads, into a strided ``out``
    as well; the kernel choice gives the same; the results match NumPy's."""
    onednn_threads(2)
    rng = np.random.default_rng(8)
    packed = rng.standard_normal((16, 64, 384)).astype(np.float32)
    q, k, v = packed.reshape(16, 64, 3, 4, 32).transpose(2, 0, 3, 1, 4)
    scores = onednn.gemm.batched_matmul(q, k.swapaxes(-1, -2))
    assert scores is not None
    np.testing.assert_allclose(scores, np.matmul(q, k.swapaxes(-1, -2)), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(products.matmul(q, k.swapaxes(-1, -2)), scores)
    out = np.zeros((16, 64, 128), np.float32).reshape(16, 64, 4, 32).transpose(0, 2, 1, 3)
    assert onednn.gemm.batched_matmul(scores, v, out) is out
    np.testing.assert_allclose(out, np.matmul(scores, v), rtol=1e-4, atol=1e-3)
    other = np.zeros_like(out)
    assert products.matmul(scores, v, other) is other
    np.testing.assert_array_equal(other, out)


@pytest.mark.parametrize("rows, fan_in, fan_out, on_primitive", [
    (128, 512, 10, True), (1024, 128, 10, True), (64, 512, 10, False), (128, 128, 10, False),
    (64, 2048, 10, True)])
def test_classifier_heads_take_the_primitive_by_rows_and_size(rows, fan_in, fan_out, on_primitive):
    """A linear layer's forward with few outputs runs on the matmul primitive from 128 rows and
    ``AFFINE_TALL_MIN_MULTIPLY_ADDS``, or past ``MIN_MULTIPLY_ADDS``; below, NumPy's path."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, fan_in)).astype(np.float32)
    w = rng.standard_normal((fan_out, fan_in)).astype(np.float32)
    b = rng.standard_normal(fan_out).astype(np.float32)
    out = onednn.gemm.affine(x, w.T, b)
    assert (out is not None) is on_primitive
    if on_primitive:
        want = x.astype(np.float64) @ w.T.astype(np.float64) + b
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


def test_linear_layers_on_onednn_gemm_match_torch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    results, state = [], None
    for lib in (torch, ember):  # torch first: ember loads its initial weights
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(300, 200), lib.nn.Tanh(), lib.nn.Linear(200, 100))
        if lib is ember:
            model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in state.items()})
        else:
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        xt = lib.tensor(x, requires_grad=True)
        model(xt).pow(2).sum().backward()
        results.append([t.detach().numpy() for t in (xt.grad, model[0].weight.grad,
                                                      model[2].weight.grad, model[0].bias.grad)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


# -- pooling ----------------------------------------------------------------------------------

# (function, input shape, kwargs): each large enough for oneDNN's size rule
POOL_CASES = [
    ("max_pool2d", (16, 16, 12, 12), dict(kernel_size=2)),                             # LeNet's
    ("max_pool2d", (16, 16, 13, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (16, 16, 13, 11), dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0))),
    ("max_pool3d", (6, 16, 6, 7, 8), dict(kernel_size=2, ceil_mode=True)),
    ("avg_pool2d", (16, 16, 12, 12), dict(kernel_size=2)),
    ("avg_pool2d", (16, 16, 13, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (16, 16, 13, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                          count_include_pad=False)),
    ("avg_pool2d", (16, 16, 13, 11), dict(kernel_size=3, stride=2, ceil_mode=True)),  # no padding
    ("avg_pool3d", (6, 16, 6, 7, 8), dict(kernel_size=3, stride=2, padding=1)),
    ("adaptive_avg_pool2d", (16, 16, 12, 12), dict(output_size=(3, 2))),
]
LAYOUTS = {"contiguous": lambda lib, t: t,
           "channels_last": lambda lib, t: t.contiguous(memory_format=lib.channels_last),
           "sliced": lambda lib, t: t[..., :-2]}


def _pool_run(lib, fn, x_data, g_data, kwargs, layout="contiguous", indices=False):
    x = lib.tensor(x_data, requires_grad=True)
    out = getattr(lib.nn.functional, fn)(LAYOUTS[layout](lib, x), **kwargs,
                                         **(dict(return_indices=True) if indices else {}))
    y, idx = out if indices else (out, None)
    y.backward(lib.tensor(g_data))
    return y, idx, x.grad


def _pool_data(fn, shape, kwargs, layout="contiguous", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = getattr(torch.nn.functional, fn)(LAYOUTS[layout](torch, torch.tensor(x)), **kwargs)
    return x, rng.standard_normal(tuple(y.shape)).astype(np.float32)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("fn, shape, kwargs", POOL_CASES)
def test_pooling_on_onednn_matches_torch(fn, shape, kwargs, layout):
    """Max pooling's values are torch's bit for bit (a maximum is exact), and so are its
    indices, derived from oneDNN's workspace; the input gradient of overlapping windows adds
    in another order. Outputs keep channels-last inputs channels-last, as torch's do."""
    if layout == "channels_last" and len(shape) != 4:
        pytest.skip("channels_last is 4-D")
    indices = fn.startswith("max")
    x, g = _pool_data(fn, shape, kwargs, layout)
    want = _pool_run(torch, fn, x, g, kwargs, layout, indices)
    with choice.only(choice.ONEDNN):
        got = _pool_run(ember, fn, x, g, kwargs, layout, indices)
    y, idx, gx = got
    assert y.is_contiguous(memory_format=ember.channels_last) == \
        want[0].is_contiguous(memory_format=torch.channels_last)
    if indices:
        assert np.array_equal(y.detach().numpy(), want[0].detach().numpy())
        assert np.array_equal(idx.numpy(), want[1].numpy())
    np.testing.assert_allclose(y.detach().numpy(), want[0].detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gx.numpy(), want[2].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
def test_channels_last_pooling_to_one_position_runs_on_onednn(fn):
    """An output of one position per channel is row-major and channels-last at once: it is
    described with channels-last strides throughout, as oneDNN's jit kernels want."""
    x, g = _pool_data(fn, (16, 64, 8, 8), dict(kernel_size=8), "channels_last")
    want = _pool_run(torch, fn, x, g, dict(kernel_size=8), "channels_last")
    with choice.only(choice.ONEDNN):
        got = _pool_run(ember, fn, x, g, dict(kernel_size=8), "channels_last")
    assert got[2].is_contiguous(memory_format=ember.channels_last)
    for a, b in ((got[0], want[0]), (got[2], want[2])):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn, shape, kwargs", [POOL_CASES[1], POOL_CASES[5]])
def test_pooling_on_onednn_twice_differentiable(fn, shape, kwargs):
    """With ``create_graph`` the backward of a oneDNN pooling is written in ember ops (the
    scatter at the derived indices; the transposed convolution), differentiable again."""
    x, g = _pool_data(fn, shape, kwargs, seed=1)
    results = []
    for lib in (torch, ember):
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        with choice.only(choice.ONEDNN) if lib is ember else contextlib.nullcontext():
            y = getattr(lib.nn.functional, fn)(xt, **kwargs)
            (gx,) = lib.autograd.grad(y, xt, gt, create_graph=True)
        (gx * gx).sum().backward()
        results.append((gx.detach().numpy(), gt.grad.numpy()))
    for got, want in zip(*results[::-1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_repeated_pooling_step_creates_no_primitives():
    for fn, shape, kwargs in (POOL_CASES[1], POOL_CASES[5]):
        x, g = _pool_data(fn, shape, kwargs)
        _pool_run(ember, fn, x, g, kwargs)
        created = runtime.plans.created
        _pool_run(ember, fn, x, g, kwargs, indices=fn.startswith("max"))
        _pool_run(ember, fn, x, g, kwargs)
        assert runtime.plans.created == created, fn


@pytest.mark.parametrize("case", ["float64", "small", "dilation", "divisor_override",
                                  "count_include_pad past the padding", "1-D"])
def test_pooling_onednn_declines_go_to_numpy(case):
    """What oneDNN does not run (or does not run faster) takes NumPy's path, and matches
    torch there."""
    fn, shape, kwargs, dtype = "max_pool2d", (8, 16, 12, 12), dict(kernel_size=2), np.float32
    if case == "float64":
        dtype = np.float64
    elif case == "small":
        shape = (2, 4, 12, 12)
    elif case == "dilation":  # oneDNN has only reference loops for dilated pooling
        kwargs = dict(kernel_size=3, padding=1, dilation=2)
    elif case == "divisor_override":
        fn, kwargs = "avg_pool2d", dict(kernel_size=3, stride=2, divisor_override=5)
    elif case == "count_include_pad past the padding":  # ceil_mode's last window
        fn, shape = "avg_pool2d", (8, 16, 12, 12)
        kwargs = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    else:
        fn, shape, kwargs = "max_pool1d", (8, 16, 200), dict(kernel_size=3, stride=2)
    x, g = _pool_data(fn, shape, kwargs)
    x, g = x.astype(dtype), g.astype(dtype)
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _pool_run(ember, fn, x, g, kwargs)
    got, want = _pool_run(ember, fn, x, g, kwargs), _pool_run(torch, fn, x, g, kwargs)
    for a, b in ((got[0], want[0]), (got[2], want[2])):
        assert a.dtype == getattr(ember, np.dtype(dtype).name)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("value", [np.nan, -np.inf])
def test_max_pooling_of_nan_or_minus_inf_takes_numpys_path(value):
    """oneDNN's max pooling skips NaNs and gives the lowest finite float for a window of
    -inf; torch propagates NaN (its last one's index) and gives -inf. Such inputs go to NumPy."""
    x, g = _pool_data("max_pool2d", (8, 16, 12, 12), dict(kernel_size=2))
    x[0, 0, :2, :2] = value
    x[1, 2, 0, 1] = value
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _pool_run(ember, "max_pool2d", x, g, dict(kernel_size=2))
    got = _pool_run(ember, "max_pool2d", x, g, dict(kernel_size=2), indices=True)
    want = _pool_run(torch, "max_pool2d", x, g, dict(kernel_size=2), indices=True)
    for a, b in zip(got, want):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)


# -- softmax ----------------------------------------------------------------------------------

SOFTMAX_CASES = [((16, 4, 64, 64), "softmax"), ((512, 100), "log_softmax"),
                 ((64, 512), "softmax")]


def _softmax_run(lib, fn, x_data, g_data, view=None):
    x = lib.tensor(x_data, requires_grad=True)
    y = getattr(lib.nn.functional, fn)(view(x) if view else x, -1)
    y.backward(lib.tensor(g_data))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape, fn", SOFTMAX_CASES)
def test_softmax_on_onednn_matches_torch(shape, fn, transposed):
    """Row-major along the last dim, or a transposed view (copied row-major first), with
    masked (-inf) positions. log_softmax's backward stays on NumPy; its forward rounds the
    log-sum-exp once more than torch's (a few ulps of the row's largest magnitude)."""
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    masked = rng.random(shape) < 0.2
    masked[..., 0, :] = masked[..., :, 0] = False  # no row masked whole, either way
    x[masked] = -np.inf
    g = rng.standard_normal(shape).astype(np.float32)
    view = (lambda t: t.transpose(-1, -2)) if transposed else None
    if transposed:
        g = np.ascontiguousarray(np.swapaxes(g, -1, -2))
    want = _softmax_run(torch, fn, x, g, view)
    with choice.only(choice.ONEDNN):
        xt = ember.tensor(x)
        forced = getattr(ember.nn.functional, fn)(view(xt) if view else xt, -1).numpy()
        if fn == "softmax":
            got = _softmax_run(ember, fn, x, g, view)
    if fn == "log_softmax":
        got = _softmax_run(ember, fn, x, g, view)
    scale = np.abs(x[np.isfinite(x)]).max() if fn == "log_softmax" else 1.0
    np.testing.assert_allclose(forced, want[0], rtol=1e-5, atol=1e-6 * scale)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * scale)


def test_softmax_declines_to_numpy():
    """Along another dim than the last (oneDNN has only reference loops there, ember's row loops
    none) and of float64: NumPy's path, which matches torch."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 512)).astype(np.float32)
    for data, dim in ((x, 0), (x.astype(np.float64), 1)):
        with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
            ember.nn.functional.softmax(ember.tensor(data), dim)
        got = ember.nn.functional.softmax(ember.tensor(data), dim).numpy()
        want = torch.nn.functional.softmax(torch.tensor(data), dim).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, equal_nan=True)


def test_onednn_softmax_declines_rows_with_nan_or_inf():
    """Where ember's row loops are not built: oneDNN makes only a NaN or +inf element NaN,
    torch the whole row, so such input goes to NumPy's path."""
    from ember.nn.functional import softmax_family
    x = np.random.default_rng(7).standard_normal((64, 512)).astype(np.float32)
    for bad in (np.nan, np.inf):
        row = x.copy()
        row[3, 7] = bad
        assert softmax_family._onednn_softmax_forward(row, 1, False) is None
    assert softmax_family._onednn_softmax_forward(x, 1, False) is not None


def test_a_repeated_softmax_step_creates_no_primitives():
    rng = np.random.default_rng(8)
    x, g = rng.standard_normal((64, 512)).astype(np.float32), np.ones((64, 512), np.float32)
    _softmax_run(ember, "softmax", x, g)
    created = runtime.plans.created
    _softmax_run(ember, "softmax", x, g)
    assert runtime.plans.created == created


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch without oneDNN")
@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d", "softmax"])
def test_forward_is_bit_identical_to_torchs_onednn_path(op):
    """torch runs oneDNN's pooling and softmax primitives on its mkldnn tensors: the same
    bits (its own CPU pooling kernels give them too; its softmax differs by an ulp)."""
    x = np.random.default_rng(13).standard_normal((16, 16, 13, 11)).astype(np.float32)
    args = {"max_pool2d": (3, 2, 1), "avg_pool2d": (3, 2, 1), "softmax": (-1,)}[op]
    want = getattr(torch.nn.functional, op)(torch.tensor(x).to_mkldnn(), *args).to_dense()
    with choice.only(choice.ONEDNN):
        got = getattr(ember.nn.functional, op)(ember.tensor(x), *args)
    assert np.array_equal(got.numpy(), want.numpy())


# -- layer norm -------------------------------------------------------------------------------

def _layer_norm_run(lib, x_data, g_data, normalized_shape, affine):
    """Output, input gradient, and the gradients of the weight and bias ``affine`` names."""
    x = lib.tensor(x_data, requires_grad=True)
    rng = np.random.default_rng(9)
    params = {name: lib.tensor(rng.standard_normal(normalized_shape).astype(x_data.dtype),
                               requires_grad=True) if name in affine else None
              for name in ("weight", "bias")}
    y = lib.nn.functional.layer_norm(x, normalized_shape, params["weight"], params["bias"])
    y.backward(lib.tensor(g_data))
    return [t.detach().numpy() for t in [y, x.grad] + [p.grad for p in params.values()
                                                       if p is not None]]


def _assert_layer_norm_close(got, want):
    for name, a, b in zip(("output", "input grad", "weight grad", "bias grad"), got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6 * max(1.0, np.abs(b).max()), err_msg=name)


@pytest.mark.parametrize("backward", ["openmp loop", "onednn"])
@pytest.mark.parametrize("affine", ["weight bias", "weight", "bias", ""])
@pytest.mark.parametrize("shape, normalized_shape", [((16, 64, 128), (128,)),
                                                     ((8, 32, 16, 16), (16, 16))])
def test_layer_norm_on_onednn_matches_torch(shape, normalized_shape, affine, backward,
                                            monkeypatch):
    """The forward on oneDNN; the backward on ember's OpenMP loop, or on oneDNN's kernel where
    the loop cannot be built."""
    from ember._backend import openmp_kernels
    if backward == "onednn":
        monkeypatch.setattr(openmp_kernels, "_functions", {"layer_norm_backward": None})
    elif not openmp_kernels.available():
        pytest.skip("no C compiler: ember's OpenMP loops cannot be built here")
    loop_results = []
    loop = openmp_kernels.layer_norm_backward
    monkeypatch.setattr(openmp_kernels, "layer_norm_backward",
                        lambda *args: loop_results.append(loop(*args)) or loop_results[-1])
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    want = _layer_norm_run(torch, x, g, normalized_shape, affine)
    with choice.only(choice.ONEDNN):
        got = _layer_norm_run(ember, x, g, normalized_shape, affine)
    _assert_layer_norm_close(got, want)
    ran = [r is not None for r in loop_results]
    assert ran == [backward == "openmp loop"]


def test_layer_norm_declines_to_numpy():
    """float64 takes NumPy's path."""
    x = np.random.default_rng(11).standard_normal((16, 64, 128))
    g = np.ones_like(x)
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _layer_norm_run(ember, x, g, (128,), "weight bias")
    for a, b in zip(_layer_norm_run(ember, x, g, (128,), "weight bias"),
                    _layer_norm_run(torch, x, g, (128,), "weight bias")):
        assert a.dtype == x.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("affine", ["weight bias", "weight", "bias", ""])
@pytest.mark.parametrize("shape, normalized_shape", [((2, 8, 128), (128,)), ((3, 5), (5,)),
                                                     ((4, 3, 7), (3, 7))])
def test_small_float32_layer_norm_runs_on_the_row_loops(shape, normalized_shape, affine, monkeypatch):
    """float32 inputs below oneDNN's size rule run on ember's row loops, forward and backward
    (on the calling thread alone), and match torch; NumPy's passes where the loops cannot be
    built give the same."""
    from ember._backend import openmp_kernels
    if not openmp_kernels.available():
        pytest.skip("no C compiler: ember's OpenMP loops cannot be built here")
    rng = np.random.default_rng(14)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    want = _layer_norm_run(torch, x, g, normalized_shape, affine)
    with choice.only(choice.ONEDNN):
        on_loops = _layer_norm_run(ember, x, g, normalized_shape, affine)
    monkeypatch.setattr(openmp_kernels, "_functions",
                        {"layer_norm_forward": None, "layer_norm_backward": None})
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        _layer_norm_run(ember, x, g, normalized_shape, affine)
    on_numpy = _layer_norm_run(ember, x, g, normalized_shape, affine)
    for got in (on_loops, on_numpy):
        assert all(a.dtype == np.float32 for a in got)
        _assert_layer_norm_close(got, want)


def test_a_repeated_layer_norm_step_creates_no_primitives():
    x = np.random.default_rng(12).standard_normal((16, 64, 128)).astype(np.float32)
    _layer_norm_run(ember, x, x, (128,), "weight bias")
    created = runtime.plans.created
    _layer_norm_run(ember, x, x, (128,), "weight bias")
    assert runtime.plans.created == created


@pytest.mark.parametrize("shape", [(1, 16, 8, 8), (4, 16, 1, 8), (4, 16, 8, 1)])
def test_channels_last_arrays_with_size_one_dims_run_on_onednn(shape):
    """A channels-last activation with a dimension of size 1 (a batch of one, a 1-wide image)
    is described with its format's strides on every dimension, so oneDNN runs it (as it runs
    the same shapes without the size-1 dimension) instead of declining to NumPy."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        xt = xt.contiguous(memory_format=lib.channels_last) if lib is torch else \
            xt.to(memory_format=lib.channels_last)
        wt = lib.tensor(w, requires_grad=True)
        if lib is ember:
            with choice.only(choice.ONEDNN):
                y = lib.nn.functional.conv2d(xt, wt, padding=1)
                y.square().sum().backward()
        else:
            y = lib.nn.functional.conv2d(xt, wt, padding=1)
            y.square().sum().backward()
        results.append([t.detach().numpy() for t in (y, wt.grad)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    with choice.only(choice.ONEDNN):
        _batch_norm_run(ember, shape, True, True, "channels_last")


# -- activations (eltwise) ------------------------------------------------------------------

ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
}   # (sigmoid runs on a loop of its own: tests/test_vector_math.py)


def _activation_run(lib, fn, x_data, g_data, view=None):
    x = lib.tensor(x_data, requires_grad=True)
    y = fn(lib.nn.functional, view(x) if view else x)
    y.backward(lib.tensor(g_data))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_on_onednn_match_torch(name, layout):
    """Forward and backward on oneDNN's eltwise primitive (forced) on a row-major array (with
    NaN, infinities and signed zeros among the values), a transposed view and a channels-last
    one: torch's values to a few ulps (exact GELU's forward bit for bit). The tanh
    approximation differs from torch's by up to a few 1e-6 where ``1 + tanh`` cancels (large
    negative inputs, whose GELU is nearly 0)."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((8, 16, 32, 32)) * 3).astype(np.float32)
    if layout == "contiguous":  # (torch's strided loops give GELU(inf) = inf, its vector one NaN)
        x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -100.0]
    g = rng.standard_normal(x.shape).astype(np.float32)
    def channels_last(t):
        lib = torch if isinstance(t, torch.Tensor) else ember
        return t.contiguous(memory_format=lib.channels_last)

    view = {"contiguous": None, "transposed": lambda t: t.transpose(-1, -2),
            "channels_last": channels_last}[layout]
    if layout == "transposed":
        g = np.ascontiguousarray(np.swapaxes(g, -1, -2))
    fn = ACTIVATIONS[name]
    want = _activation_run(torch, fn, x, g, view)
    with choice.only(choice.ONEDNN):
        got = _activation_run(ember, fn, x, g, view)
    atol = 5e-6 if name == "gelu_tanh" else 2e-6  # (torch's strided loops round differently)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=atol, equal_nan=True)
    if name == "gelu" and layout == "contiguous":
        np.testing.assert_array_equal(got[0], want[0])


@needs_openmp_loops
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("name, fn", [("relu6", lambda F, x: F.relu6(x)),
                                      ("hardtanh", lambda F, x: F.hardtanh(x, -1.5, 2.0))])
def test_hardtanh_backward_matches_torch_at_the_bounds_and_nan(name, fn, layout):
    """Forward and backward on ember's OpenMP loops (forced): the gradient is zero at the bounds
    and beyond, and at NaN as torch gives it for a tensor this large: 0 for a row-major one
    (its vectorised kernel), the incoming gradient for a channels-last one (its other loop)."""
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((8, 16, 48, 48)) * 4).astype(np.float32)
    x.reshape(-1)[:9] = [np.nan, np.inf, np.inf, -np.inf, 0.0, 6.0, -1.5, 2.0, -0.0]
    g = rng.standard_normal(x.shape).astype(np.float32)

    def channels_last(t):
        lib = torch if isinstance(t, torch.Tensor) else ember
        return t.contiguous(memory_format=lib.channels_last)
    view = channels_last if layout == "channels_last" else None
    want = _activation_run(torch, fn, x, g, view)
    with choice.only(choice.ONEDNN):
        xt = ember.tensor(x, requires_grad=True)
        y = fn(ember.nn.functional, view(xt) if view else xt)
        y.backward(ember.tensor(g))
    np.testing.assert_array_equal(y.detach().numpy(), want[0])
    np.testing.assert_array_equal(xt.grad.numpy(), want[1])
    assert (xt.grad.numpy().reshape(-1)[0] == 0) == (layout == "contiguous")


def test_activations_decline_to_numpy():
    """float64, small inputs and broadcast views take NumPy's path, which matches torch."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((64, 512)).astype(np.float32)
    for data in (x.astype(np.float64), x[:4, :64]):
        for fn in ACTIVATIONS.values():
            with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
                fn(ember.nn.functional, ember.tensor(data))
            got = fn(ember.nn.functional, ember.tensor(data)).numpy()
            want = fn(torch.nn.functional, torch.tensor(data)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    wide = ember.tensor(x[:1]).expand(64, 512)
    with choice.only(choice.ONEDNN), pytest.raises(choice.KernelNotApplicable):
        ember.nn.functional.gelu(wide)


def test_a_repeated_activation_step_creates_no_primitives():
    rng = np.random.default_rng(11)
    x, g = rng.standard_normal((64, 512)).astype(np.float32), np.ones((64, 512), np.float32)
    _activation_run(ember, ACTIVATIONS["gelu"], x, g)
    created = runtime.plans.created
    _activation_run(ember, ACTIVATIONS["gelu"], x, g)
    assert runtime.plans.created == created
