"""Which ember ops autocast changes, and how: torch 2.13's CPU lists, checked op by op against
real torch (float32 inputs under ``autocast("cpu")`` and the dtype that comes out).

Each op carries its policy through the ``@autocast_policy`` decorator where it is defined;
this table names them all in one place (tests/test_amp.py checks the two agree and compares
every entry with torch).

Ops that torch composes of listed ops get their policy from the parts, in both libraries:
``linalg.multi_dot`` and ``linalg.matrix_power`` (of mm), ``F.multi_head_attention_forward``
and the nn layers (of linear, bmm, conv), ``hstack``/``vstack`` (of cat).
"""

# lower precision: the autocast dtype (bfloat16 by default on CPU)
LOWER = (
    "mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "einsum", "tensordot", "inner",
    "nn.functional.linear", "nn.functional.prelu", "prelu",
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d",
    "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.scaled_dot_product_attention",
    "linalg.vecdot",
)

# float32
FP32 = (
    "prod", "quantile", "nanquantile", "cdist", "trace",
    "cholesky", "inverse", "svd", "qr",
    "linalg.inv", "linalg.inv_ex", "linalg.solve", "linalg.cholesky", "linalg.cholesky_ex",
    "linalg.svd", "linalg.svdvals", "linalg.qr", "linalg.eigh", "linalg.eigvalsh",
    "linalg.matrix_rank", "linalg.lstsq", "linalg.cond", "linalg.householder_product", "orgqr",
    "linalg.tensorinv", "linalg.tensorsolve", "lu_solve",
    "nn.functional.avg_pool3d", "nn.functional.max_pool3d", "nn.functional.max_unpool1d",
    "nn.functional.max_unpool2d", "nn.functional.grid_sample", "nn.functional.pad",
    "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.mse_loss", "nn.functional.l1_loss", "nn.functional.smooth_l1_loss",
    "nn.functional.huber_loss", "nn.functional.nll_loss", "nn.functional.cross_entropy",
    "nn.functional.kl_div", "nn.functional.poisson_nll_loss", "nn.functional.ctc_loss",
    "nn.functional.cosine_embedding_loss", "nn.functional.hinge_embedding_loss",
    "nn.functional.margin_ranking_loss", "nn.functional.soft_margin_loss",
    "nn.functional.triplet_margin_loss", "nn.functional.multi_margin_loss",
    "nn.functional.multilabel_margin_loss",
)

# the widest floating dtype among the inputs
PROMOTE = ("cat", "stack", "index_copy")

# left in their input dtype: torch runs them in a kernel of their own, ember composes them of
# ops listed above
NATIVE = (
    "nn.functional.bilinear", "nn.functional.adaptive_avg_pool1d",
    "nn.functional.adaptive_avg_pool2d", "nn.functional.interpolate",
)

POLICY_OF = {**dict.fromkeys(LOWER, "lower"), **dict.fromkeys(FP32, "fp32"),
             **dict.fromkeys(PROMOTE, "promote"), **dict.fromkeys(NATIVE, "native")}

# linalg.eig and linalg.eigvals carry the fp32 policy too; they are left out of this table,
# whose cases compare gradients, because their results are complex (no complex autograd yet)

# on torch's CPU lists, absent from ember
NOT_IN_EMBER = (
    "conv_tbc", "_convolution", "mkldnn_rnn_layer", "_native_multi_head_attention",
    "polar", "stft", "view_as_complex", "cholesky_inverse", "cholesky_solve",
    "ormqr", "pinverse", "geqrf", "triangular_solve",
    "max_unpool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "fractional_max_pool2d",
    "fractional_max_pool3d", "nll_loss2d (reached through nll_loss)", "fft.*",
    "fake_quantize_per_tensor_affine",
)

_FP32_PAD_MODES = {"reflect": (3, 4), "replicate": (3, 4, 5)}


def pad_runs_in_fp32(input, pad=None, mode="constant", value=None):
    """Whether torch's autocast casts this ``pad`` call to float32: the reflection pads of
    1-D and 2-D inputs and the replication pads of 1-D to 3-D inputs (batched or not)."""
    ndims = _FP32_PAD_MODES.get(mode)
    if ndims is None or pad is None:
        return False
    spatial = len(pad) // 2
    return input.ndim in (spatial + 1, spatial + 2) and spatial + 2 in ndims


def max_pool3d_runs_in_fp32(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """torch lists ``max_pool3d`` but not ``max_pool3d_with_indices``."""
    return not return_indices
