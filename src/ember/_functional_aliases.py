"""torch's top-level names for the functions behind the layers (``torch.conv2d``,
``torch.layer_norm``, ``torch.batch_norm``, ...), with torch's top-level signatures: those of
its ATen operators, which differ from ``nn.functional``'s in places (``torch.batch_norm`` takes
``weight`` and ``bias`` before the running statistics, ``torch.embedding`` the weight first,
losses take ``reduction`` as an integer: 0 none, 1 mean, 2 sum, and its default, where it has
one, is 0 as torch's Python binding makes it, not ATen's 1). Each routes to the
``nn.functional`` function, so values and gradients are that function's."""
from .autograd.grad_mode import no_grad
from .nn import functional as F
from .nn.functional.dropout import _alpha_drop, _apply, _drop
from .nn.functional.recurrent import _rnn_cell, gru_cell, lstm_cell
from .ops.reduce import var_mean

# Same signature at the top level as in nn.functional.
from .nn.functional import (
    adaptive_avg_pool1d, bilinear, celu_, channel_shuffle, conv1d, conv2d, conv3d,
    conv_transpose1d, conv_transpose2d, conv_transpose3d, cosine_similarity, pairwise_distance,
    pixel_shuffle, pixel_unshuffle, rms_norm, rrelu_, selu_, threshold_,
)

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout",
    "alpha_dropout_", "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits",
    "celu_", "channel_shuffle", "constant_pad_nd", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
    "cosine_embedding_loss", "cosine_similarity", "ctc_loss", "dropout_", "embedding", "embedding_bag",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm", "gru_cell",
    "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "lstm_cell",
    "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
    "native_batch_norm", "native_channel_shuffle", "native_dropout", "native_group_norm",
    "native_layer_norm", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle",
    "poisson_nll_loss", "rms_norm", "rnn_relu_cell", "rnn_tanh_cell", "rrelu", "rrelu_", "selu_",
    "threshold_", "triplet_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _reduction(reduction):
    """nn.functional's name of ATen's reduction number (0 none, 1 mean, 2 sum)."""
    if isinstance(reduction, str):
        return reduction
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


# -- convolution ------------------------------------------------------------------------------

def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution (or, with ``transposed``, the transposed convolution) of any of 1 to 3
    spatial dimensions that ``conv1d``...``conv_transpose3d`` compute."""
    dims = weight.dim() - 2
    if dims < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if dims > 3:
        raise NotImplementedError(f"ember: convolution of {dims} spatial dimensions")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[dims - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[dims - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


# -- normalization ----------------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """Layer normalization over the last ``len(normalized_shape)`` dimensions
    (:func:`ember.nn.functional.layer_norm`)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Group normalization (:func:`ember.nn.functional.group_norm`)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """Batch normalization (:func:`ember.nn.functional.batch_norm`, arguments in ATen's
    order)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """Instance normalization (:func:`ember.nn.functional.instance_norm`, arguments in ATen's
    order)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def _statistics(input, dims, eps):
    """(mean, 1 / sqrt(var + eps)) of ``input`` over ``dims``, kept, without history."""
    with no_grad():
        var, mean = var_mean(input, dims, unbiased=False, keepdim=True)
        return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Layer normalization's ``(output, mean, rstd)``; the statistics, kept over the
    normalized dimensions, have no gradient."""
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _statistics(input, dims, eps)
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch normalization's ``(output, save_mean, save_invstd)``: the batch's per-channel
    statistics when they were used (training, or no running statistics), else empty."""
    use_batch = training or running_mean is None
    if use_batch:
        dims = (0,) + tuple(range(2, input.dim()))
        mean, invstd = (t.reshape(-1) for t in _statistics(input, dims, eps))
    else:
        mean = invstd = input.new_empty((0,))
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, invstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Group normalization's ``(output, mean, rstd)``, the statistics of shape ``(N, group)``
    (differentiable, as torch's are)."""
    grouped = input.reshape(N, group, -1)
    var, mean = var_mean(grouped, -1, unbiased=False)
    return F.group_norm(input, group, weight, bias, eps), mean, (var + eps).rsqrt()


# -- embedding --------------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at ``indices``; a ``padding_idx`` of -1 (or any negative one)
    means none, as in ATen."""
    padding_idx = None if padding_idx is None or padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                       sparse=sparse)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums (``mode`` 0), averages (1) or takes the max (2) of bags of rows of ``weight``: the
    bags are ``indices`` cut at ``offsets``. Returns ``(output, offset2bag, bag_size,
    max_indices)`` as ATen does (:func:`ember.nn.functional.embedding_bag` returns ``output``);
    ``padding_idx`` -1 (or None) means none."""
    from ._tensor import Tensor
    from .ops._common import make
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"mode has to be one of sum, mean or max, but got {mode}")
    padding_idx = None if padding_idx is None or padding_idx < 0 else padding_idx
    output = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                             _BAG_MODES[mode], sparse, per_sample_weights, include_last_offset,
                             padding_idx)
    extras = _bag_extras(weight._data, indices._data, offsets._data, mode, include_last_offset,
                         padding_idx)
    return (output,) + tuple(make(a) for a in extras)


def _bag_extras(weight, indices, offsets, mode, include_last_offset, padding_idx):
    """ATen's other outputs of embedding_bag, as arrays of the indices' dtype: each index's bag
    (none for a sum over float32/half rows without padding, where ATen's kernel skips it),
    each bag's size and, for max, each maximum's row (the size again for mean; zeros for sum)."""
    from ._backend import namespace_of
    xp = namespace_of(indices)
    n, dtype = indices.shape[0], indices.dtype
    starts = offsets.astype("int64")
    if include_last_offset:
        starts = starts[:-1]
    bags = len(starts)
    offset2bag = (xp.searchsorted(starts, xp.arange(n), side="right") - 1).astype(dtype)
    if mode == 0:
        fast = weight.dtype.name in ("float32", "float16", "bfloat16") and padding_idx is None
        zeros = xp.zeros(bags, dtype)
        return (xp.zeros(0, dtype) if fast else offset2bag), zeros, zeros.copy()
    kept = xp.ones(n, bool) if padding_idx is None else indices != padding_idx
    member = (offset2bag >= 0) & kept
    bag_size = xp.bincount(offset2bag[member].astype("int64"), minlength=bags)[:bags].astype(dtype)
    if mode == 1:
        return offset2bag, bag_size, bag_size.copy()
    max_indices = xp.zeros((bags, weight.shape[1]), dtype)
    for bag in range(bags):
        rows = indices[member & (offset2bag == bag)]
        if rows.size:
            max_indices[bag] = rows[weight[rows].argmax(axis=0)]
    return offset2bag, bag_size, max_indices


# -- pooling ----------------------------------------------------------------------------------

def _stride(stride):
    return None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """1-D max pooling (:func:`ember.nn.functional.max_pool1d`); an empty ``stride`` is the
    kernel size."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """2-D max pooling (:func:`ember.nn.functional.max_pool2d`)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """3-D max pooling (:func:`ember.nn.functional.max_pool3d`)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """1-D max pooling's ``(output, indices)``."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling (:func:`ember.nn.functional.avg_pool1d`)."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_max_pool1d(input, output_size):
    """1-D adaptive max pooling's ``(output, indices)``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def native_channel_shuffle(input, groups):
    """:func:`channel_shuffle`."""
    return F.channel_shuffle(input, groups)


# -- losses -----------------------------------------------------------------------------------

def kl_div(input, target, reduction=0, *, log_target=False):
    """The Kullback-Leibler divergence loss (:func:`ember.nn.functional.kl_div`)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """The Poisson negative log likelihood loss (:func:`ember.nn.functional.poisson_nll_loss`)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """The hinge embedding loss (:func:`ember.nn.functional.hinge_embedding_loss`)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """The margin ranking loss (:func:`ember.nn.functional.margin_ranking_loss`)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """The cosine embedding loss (:func:`ember.nn.functional.cosine_embedding_loss`)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=0):
    """The triplet margin loss (:func:`ember.nn.functional.triplet_margin_loss`)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """The Connectionist Temporal Classification loss (:func:`ember.nn.functional.ctc_loss`)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """Binary cross entropy of ``sigmoid(input)`` computed stably from the logits
    (:func:`ember.nn.functional.binary_cross_entropy_with_logits`)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


# -- dropout ----------------------------------------------------------------------------------

def _channels(input):
    """The mask shape that drops whole channels of an (N, C, ...) input."""
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


def dropout_(input, p, train):
    """In-place :func:`dropout`."""
    return _apply(_drop, input, p, train, True, input.shape)


def alpha_dropout(input, p, train):
    """Alpha dropout (:func:`ember.nn.functional.alpha_dropout`)."""
    return _apply(_alpha_drop, input, p, train, False, input.shape)


def alpha_dropout_(input, p, train):
    """In-place :func:`alpha_dropout`."""
    return _apply(_alpha_drop, input, p, train, True, input.shape)


def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels (dimension 1) of an (N, C, ...) input."""
    return _apply(_alpha_drop, input, p, train, False, _channels(input))


def feature_alpha_dropout_(input, p, train):
    """In-place :func:`feature_alpha_dropout`."""
    return _apply(_alpha_drop, input, p, train, True, _channels(input))


def feature_dropout(input, p, train):
    """Dropout of whole channels (dimension 1) of an (N, C, ...) input."""
    return _apply(_drop, input, p, train, False, _channels(input))


def feature_dropout_(input, p, train):
    """In-place :func:`feature_dropout`."""
    return _apply(_drop, input, p, train, True, _channels(input))


def native_dropout(input, p, train):
    """Dropout's ``(output, mask)``, the mask a bool tensor of the kept elements (all of them
    when not ``train``)."""
    if train is None or train:
        from .nn.functional.dropout import _check_p, _keep_mask
        from .ops._common import make
        _check_p(p)
        keep = make(_keep_mask(input, p, input.shape)) if p < 1 else input.new_zeros(input.shape)
        return input * keep * (0.0 if p == 1 else 1.0 / (1.0 - p)), keep.bool()
    return input * 1.0, input.new_ones(input.shape, dtype=bool)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU (:func:`ember.nn.functional.rrelu`)."""
    if generator is None:
        return F.rrelu(input, lower, upper, training)
    from .nn.functional.activation import _rrelu
    return _rrelu(input, lower, upper, training, generator)


# -- padding, sampling grids, recurrent cells -------------------------------------------------

def constant_pad_nd(input, pad, value=0):
    """Pads ``input`` with ``value`` (:func:`ember.nn.functional.pad`, mode ``constant``)."""
    return F.pad(input, pad, "constant", value)


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid of the affine maps ``theta`` (:func:`ember.nn.functional.affine_grid`)."""
    return F.affine_grid(theta, size, align_corners)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return F.grid_sample(input, grid, _INTERPOLATIONS[interpolation_mode],
                         _PADDINGS[padding_mode], align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`ember.nn.functional.grid_sample` with its modes as numbers: interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` of a 4-D input."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` of a 5-D input."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with tanh: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "tanh")


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with ReLU: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "relu")

