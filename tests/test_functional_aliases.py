"""torch's top-level names for nn.functional's ops and for Tensor methods (``torch.conv2d``,
``torch.batch_norm`` with ATen's argument order, losses with integer reductions,
``torch.native_layer_norm``, the window functions, ``torch.range``, ...) against torch: values
and gradients in float64, and the errors and warnings torch gives."""
import warnings

import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(0)


def R(*shape, low=-1.0, high=1.0):
    """Float64 values; ``lib.tensor`` of them requires grad in the comparisons."""
    return rng.uniform(low, high, size=shape)


class Fixed:
    """Integer (or other fixed-dtype) values: a tensor without gradient."""

    def __init__(self, values, dtype="int64"):
        self.values, self.dtype = np.asarray(values), dtype


def _to(lib, value, leaves):
    if isinstance(value, np.ndarray):
        t = lib.tensor(value, requires_grad=True)
        leaves.append(t)
        return t
    if isinstance(value, Fixed):
        return lib.tensor(value.values, dtype=getattr(lib, value.dtype))
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [_to(lib, v, leaves) for v in value]
    return value


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _run(lib, name, args, kwargs):
    leaves = []
    targs = [_to(lib, a, leaves) for a in args]
    tkwargs = {k: _to(lib, v, leaves) for k, v in kwargs.items()}
    outs = _outputs(getattr(lib, name)(*targs, **tkwargs))
    floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if floats:
        total = sum((o * lib.arange(1.0, o.numel() + 1, dtype=o.dtype).reshape(o.shape)).sum()
                    for o in floats)
        total.backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in leaves]
    return [(tuple(o.shape), str(o.dtype).split(".")[1], o.detach().numpy()) for o in outs], grads


x4 = R(2, 3, 5, 5)
CASES = {
    "conv1d": ((R(2, 3, 7), R(4, 3, 3), R(4)), {"stride": 2, "padding": 1}),
    "conv2d": ((x4, R(4, 3, 3, 3)), {"padding": "same"}),
    "conv3d": ((R(1, 2, 4, 4, 4), R(3, 2, 2, 2, 2)), {}),
    "conv_transpose1d": ((R(2, 3, 5), R(3, 2, 3)), {"stride": 2, "output_padding": 1}),
    "conv_transpose2d": ((x4, R(3, 2, 3, 3), R(2)), {"padding": 1}),
    "conv_transpose3d": ((R(1, 2, 3, 3, 3), R(2, 2, 2, 2, 2)), {}),
    "convolution": ((x4, R(4, 3, 3, 3), R(4), [2, 2], [1, 1], [1, 1], False, [0, 0], 1), {}),
    "convolution transposed": ((x4, R(3, 2, 3, 3), None, [2, 2], [1, 1], [1, 1], True, [1, 1],
                                1), {}),
    "layer_norm": ((x4, [5, 5], R(5, 5), R(5, 5), 1e-3), {}),
    "group_norm": ((x4, 3, R(3), R(3)), {}),
    "batch_norm": ((x4, R(3), R(3), Fixed(R(3), "float64"), Fixed(R(3, low=0.5), "float64"), False, 0.1,
                    1e-5, True), {}),
    "batch_norm training": ((x4, None, None, None, None, True, 0.1, 1e-5, False), {}),
    "instance_norm": ((x4, R(3), R(3), None, None, True, 0.1, 1e-5, False), {}),
    "embedding": ((R(6, 3), Fixed([[0, 2], [5, 2]])), {"padding_idx": 2}),
    "embedding no padding": ((R(6, 3), Fixed([1, 1, 4])), {}),
    "max_pool1d": ((R(2, 3, 8), 3), {"stride": 2, "padding": 1}),
    "max_pool2d": ((x4, 2), {}),
    "max_pool3d": ((R(1, 2, 4, 4, 4), [2, 2, 2]), {"stride": [], "ceil_mode": True}),
    "max_pool1d_with_indices": ((R(2, 3, 8), 2), {}),
    "avg_pool1d": ((R(2, 3, 8), 3), {"stride": 2, "padding": 1, "count_include_pad": False}),
    "adaptive_avg_pool1d": ((R(2, 3, 8), 3), {}),
    "adaptive_max_pool1d": ((R(2, 3, 8), 3), {}),
    "pixel_shuffle": ((R(1, 8, 2, 3), 2), {}),
    "pixel_unshuffle": ((R(1, 2, 4, 6), 2), {}),
    "channel_shuffle": ((R(1, 6, 2, 2), 3), {}),
    "native_channel_shuffle": ((Fixed(R(1, 6, 2, 2), "float64"), 2), {}),
    "cosine_similarity": ((R(3, 4), R(3, 4)), {"dim": 0}),
    "pairwise_distance": ((R(3, 4), R(3, 4), 3.0), {"keepdim": True}),
    "bilinear": ((R(3, 2), R(3, 4), R(5, 2, 4), R(5)), {}),
    "kl_div": ((R(3, 4), R(3, 4, low=0.1)), {"reduction": 2}),
    "kl_div log_target": ((R(3, 4), R(3, 4), 0), {"log_target": True}),
    "poisson_nll_loss": ((R(3, 4), R(3, 4, low=0.0, high=3.0), True, True, 1e-8, 1), {}),
    "hinge_embedding_loss": ((R(3, 4), Fixed(np.sign(R(3, 4)), "float64"), 0.5, 2), {}),
    "margin_ranking_loss": ((R(5), R(5), Fixed(np.sign(R(5)), "float64"), 0.2), {}),
    "cosine_embedding_loss": ((R(3, 4), R(3, 4), Fixed([1.0, -1.0, 1.0], "float64"), 0.1, 0), {}),
    "triplet_margin_loss": ((R(3, 4), R(3, 4), R(3, 4)), {"swap": True, "reduction": 2}),
    "ctc_loss": ((np.log(rng.dirichlet(np.ones(5), size=(6, 2))), Fixed([[1, 2, 2], [3, 4, 0]]),
                  [6, 5], [3, 2]), {"reduction": 0}),
    "binary_cross_entropy_with_logits": ((R(3, 4), Fixed(rng.uniform(size=(3, 4)), "float64"),
                                          Fixed(R(4), "float64"),
                                          Fixed(R(4, low=0.5, high=2.0), "float64"), 2), {}),
    "binary_cross_entropy_with_logits default": ((R(3, 4), Fixed(rng.uniform(size=(3, 4)), "float64")),
                                                 {}),
    "hinge_embedding_loss default": ((R(3, 4), Fixed(np.sign(R(3, 4)), "float64")), {}),
    "kl_div mean": ((R(3, 4), R(3, 4, low=0.1), 1), {}),
    "constant_pad_nd": ((R(2, 3), [1, 2, 0, 1], 0.5), {}),
    "affine_grid_generator": ((R(2, 2, 3), [2, 1, 3, 4], False), {}),
    "grid_sampler": ((R(1, 2, 4, 5), R(1, 3, 3, 2), 0, 1, True), {}),
    "grid_sampler_2d": ((R(1, 2, 4, 5), R(1, 3, 3, 2), 0, 0, False), {}),
    "rms_norm": ((R(2, 3, 4), [4], R(4)), {"eps": 1e-4}),
    "lstm_cell": ((R(3, 4), [R(3, 5), R(3, 5)], R(20, 4), R(20, 5), R(20), R(20)), {}),
    "gru_cell": ((R(3, 4), R(3, 5), R(15, 4), R(15, 5), R(15), R(15)), {}),
    "rnn_tanh_cell": ((R(3, 4), R(3, 5), R(5, 4), R(5, 5)), {}),
    "rnn_relu_cell": ((R(3, 4), R(3, 5), R(5, 4), R(5, 5), R(5), None), {}),
    "native_layer_norm": ((R(2, 3, 4), [3, 4], R(3, 4), None, 1e-5), {}),
    "native_batch_norm": ((x4, R(3), R(3), None, None, True, 0.1, 1e-5), {}),
    "native_batch_norm eval": ((x4, R(3), None, Fixed(R(3), "float64"), Fixed(R(3, low=0.5), "float64"),
                                False, 0.1, 1e-5), {}),
    "native_group_norm": ((x4, R(3), R(3), 2, 3, 25, 3, 1e-5), {}),
    "native_dropout eval": ((R(3, 4), 0.5, False), {}),
    "alpha_dropout": ((R(3, 4), 0.5, False), {}),
    "feature_alpha_dropout": ((R(3, 4), 0.5, False), {}),
    "feature_dropout": ((R(3, 4), 0.5, False), {}),
    "rrelu": ((R(3, 4),), {"lower": 0.1, "upper": 0.3}),
    "split_with_sizes": ((R(5, 3), [2, 3]), {}),
    "unsafe_split": ((R(5, 3), 2), {"dim": 0}),
    "unsafe_split_with_sizes": ((R(3, 5), [1, 4], 1), {}),
    "unsafe_chunk": ((R(5, 3), 3), {}),
    "detach": ((R(2, 3),), {}),
    "positive": ((R(2, 3),), {}),
    "matrix_power": ((R(3, 3), 3), {}),
    "pinverse": ((R(4, 3),), {}),
    "diagflat": ((R(2, 2),), {"offset": -1}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients_match_torch(case):
    name = case.split(" ")[0]
    args, kwargs = CASES[case]
    (ours, our_grads), (theirs, their_grads) = (_run(lib, name, args, kwargs)
                                                for lib in (ember, torch))
    assert [o[:2] for o in ours] == [t[:2] for t in theirs]
    for (_, _, a), (_, _, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
    assert [g is None for g in our_grads] == [g is None for g in their_grads]
    for a, b in zip(our_grads, their_grads):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def test_native_group_norm_statistics_carry_gradients_as_torch_s_do():
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(x4, requires_grad=True)
        _, mean, rstd = lib.native_group_norm(x, None, None, 2, 3, 25, 3, 1e-5)
        (mean * 2 + rstd).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout_", "feature_dropout_",
                                  "feature_alpha_dropout_", "rrelu_", "celu_", "selu_"])
def test_in_place_functional_aliases_write_into_their_input(name):
    extra = {"dropout_": (0.5, False), "alpha_dropout_": (0.5, False),
             "feature_dropout_": (0.5, False), "feature_alpha_dropout_": (0.5, False)}
    results = []
    for lib in (ember, torch):
        x = lib.tensor(R(3, 4) if not results else results[0][1])
        original = x.numpy().copy()
        assert getattr(lib, name)(x, *extra.get(name, ())) is x
        results.append((x.numpy().copy(), original))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-7)


def test_threshold_in_place():
    values = R(3, 4)
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(values)
        assert lib.threshold_(x, 0.1, -5.0) is x
        outs.append(x.numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("fn", ["dropout_", "feature_dropout_", "alpha_dropout_"])
def test_training_dropout_changes_the_input_in_place(fn):
    x = ember.ones(200, 4)
    assert getattr(ember, fn)(x, 0.5, True) is x
    assert x._version == 1
    assert (x != 1).any()


def test_feature_dropout_drops_whole_channels():
    x = ember.ones(4, 50, 3, 3)
    y = ember.feature_dropout(x, 0.5, True)
    per_channel = y.reshape(4, 50, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert (per_channel == 0).any() and (per_channel == 2).any()


def test_native_dropout_in_training_returns_the_mask_it_used():
    x = ember.tensor(R(100, 10) + 2.0, requires_grad=True)
    out, mask = ember.native_dropout(x, 0.25, True)
    assert mask.dtype == ember.bool and 0.6 < mask.float().mean().item() < 0.9
    np.testing.assert_allclose(out.detach().numpy(),
                               np.where(mask.numpy(), x.detach().numpy() / 0.75, 0.0))
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.75)


def test_rrelu_in_training_draws_slopes_between_its_bounds():
    x = ember.tensor(R(1000) - 2.0, requires_grad=True)
    y = ember.rrelu(x, 0.1, 0.3, training=True)
    assert type(y.grad_fn).__name__ == "RreluWithNoiseBackward0"
    slopes = (y / x).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    module = ember.nn.RReLU(0.1, 0.3)
    assert repr(module) == repr(torch.nn.RReLU(0.1, 0.3))
    assert (module.eval()(x) == ember.rrelu(x, 0.1, 0.3)).all()


def test_rrelu_refuses_integers_as_torch_does():
    for training in (False, True):
        messages = []
        for lib in (ember, torch):
            with pytest.raises(NotImplementedError) as info:
                lib.rrelu(lib.tensor([1, -2]), training=training)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("length", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_functions_match_torch(name, length, periodic, dtype):
    ours = getattr(ember, name)(length, periodic, dtype=getattr(ember, dtype))
    theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
    assert ours.dtype == getattr(ember, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=2e-7)


def test_window_function_options_match_torch():
    for lib in (ember, torch):
        assert lib.hann_window(4).dtype == lib.float32
        assert lib.hann_window(4, requires_grad=True).requires_grad
    np.testing.assert_allclose(ember.hamming_window(9, False, 0.6, 0.3).numpy(),
                               torch.hamming_window(9, False, 0.6, 0.3).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ember.kaiser_window(9, True, 5.0, dtype=ember.float64).numpy(),
                               torch.kaiser_window(9, True, 5.0, dtype=torch.float64).numpy(),
                               rtol=1e-12)
    for call in (lambda lib: lib.hann_window(-1),
                 lambda lib: lib.blackman_window(3, dtype=lib.int64)):
        messages = []
        for lib in (ember, torch):
            with pytest.raises(RuntimeError) as info:
                call(lib)
            messages.append(str(info.value).split(", got")[0])
        assert messages[0] == messages[1]


@pytest.mark.parametrize("args,kwargs", [
    ((1, 4), {}), ((0, 1, 0.25), {}), ((1, 4), {"dtype": "int64"}), ((5, 1, -1.5), {}),
    ((0.1, 0.35, 0.05), {"dtype": "float64"}), ((2, 2), {}),
])
def test_range_includes_its_end_and_warns_as_torch_does(args, kwargs):
    results = []
    for lib in (ember, torch):
        options = {k: getattr(lib, v) for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = lib.range(*args, **options)
        assert [str(w.message) for w in caught] == [
            "torch.range is deprecated and will be removed in a future release because its "
            "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
            "which produces values in [start, end)."]
        results.append((str(r.dtype).split(".")[1], r.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_range_errors_match_torch():
    for args in ((0, 1, 0), (1, 0, 1)):
        messages = []
        for lib in (ember, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError) as info:
                    lib.range(*args)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_chain_matmul_warns_and_multiplies():
    mats = [R(2, 3), R(3, 4), R(4, 2)]
    results = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:   # torch warns once a process
            warnings.simplefilter("always")
            results.append(lib.chain_matmul(*(lib.tensor(m) for m in mats)).numpy())
            single = lib.tensor(mats[0])
            assert lib.chain_matmul(single) is not single
        assert all("torch.chain_matmul is deprecated" in str(w.message) for w in caught)
        assert lib is torch or len(caught) == 2
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_tensor_questions_match_torch():
    for lib in (ember, torch):
        one, many = lib.tensor([0.5]), lib.ones(2, 3)
        assert lib.is_nonzero(one) and not lib.is_nonzero(lib.tensor(0)) and one.is_nonzero()
        assert lib.is_same_size(many, lib.zeros(2, 3)) and not many.is_same_size(one)
        assert lib.is_signed(many) and not lib.is_signed(lib.tensor([1], dtype=lib.uint8))
        assert not lib.is_inference(many) and not lib.is_conj(many) and not lib.is_neg(many)
        assert lib.get_device(many) == -1
        assert lib.positive(many) is many
        d = lib.detach(many.requires_grad_())
        assert not d.requires_grad and d.data_ptr() == many.data_ptr()
    for call in (lambda lib: lib.is_nonzero(lib.ones(2)), lambda lib: lib.is_nonzero(lib.ones(0)),
                 lambda lib: lib.positive(lib.tensor([True]))):
        messages = []
        for lib in (ember, torch):
            with pytest.raises(RuntimeError) as info:
                call(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_split_with_sizes_refuses_sizes_that_do_not_sum_as_torch_does():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.split_with_sizes(lib.ones(5), [2, 2])
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_typename_matches_torch_for_objects():
    assert ember.typename(3) == torch.typename(3) == "int"
    assert ember.typename(ember.nn.Linear) == "ember.nn.modules.linear.Linear"
    assert ember.typename(ember.ones(2)) == ember.ones(2).type()


def test_out_arguments_of_range_and_chain_matmul():
    out = ember.empty(0)
    with pytest.warns(UserWarning):
        assert ember.range(1, 3, out=out) is out
    assert out.tolist() == [1.0, 2.0, 3.0]
    out = ember.empty(2, 2)
    with pytest.warns(UserWarning):
        assert ember.chain_matmul(ember.eye(2), ember.ones(2, 2), out=out) is out
    assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]
