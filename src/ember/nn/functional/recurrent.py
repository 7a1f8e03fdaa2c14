"""The recurrent layers' computations (``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells).

One direction of one layer runs as a single autograd node (torch's CPU LSTM records
``MkldnnRnnLayerBackward0`` the same way): the input projection of every timestep is one
matmul, each step one matmul with the hidden weights and a few whole-array ops, and backward
is backpropagation through time written on arrays. With ``create_graph`` the node instead
recomputes the layer with ember ops (the cell functions below) and differentiates that, so
gradients of every order remain available.

Every layer works on packed rows: a padded ``(T, B, *)`` input is the packed sequence whose
batch sizes are all ``B``. At step ``t`` the first ``batch_sizes[t]`` rows of the state are
updated and the rest keep their value, which gives both directions of a PackedSequence (rows
leave the batch going forward and join it, from ``h0``, going backward)."""
import numpy as np

from ...autograd.grad_mode import enable_grad
from ..._backend import onednn, products
from ..._backend.choice import KernelChoice
from ...ops.shape import cat
from ...ops._common import Node, grad_state, make, namespace_of, record
from .linear import linear
from ...autograd._dual import jvp_by_transposition

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_N_INPUTS = 8   # a layer's node's inputs: input, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr


# ---------------------------------------------------------------------------------------------
# Cells in ember ops: the cell modules, and the recomputation that gives higher-order gradients


def _lstm_cell(input, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One LSTM step: ``(h', c')``; ``h'`` projected by ``w_hr`` when given."""
    gates = linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    if w_hr is not None:
        hy = linear(hy, w_hr)
    return hy, cy


def _gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``h' = n + z * (h - n)``."""
    i_r, i_z, i_n = linear(input, w_ih, b_ih).chunk(3, 1)
    h_r, h_z, h_n = linear(hx, w_hh, b_hh).chunk(3, 1)
    reset = (i_r + h_r).sigmoid()
    update = (i_z + h_z).sigmoid()
    new = (i_n + reset * h_n).tanh()
    return (hx - new) * update + new


def _rnn_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    pre = linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _steps(batch_sizes, reverse):
    """``(batch size, row slice)`` of each timestep of the packed rows, in time order
    (reversed when ``reverse``)."""
    starts, start = [], 0
    for size in batch_sizes:
        starts.append(start)
        start += size
    order = range(len(batch_sizes))
    for t in (reversed(order) if reverse else order):
        yield batch_sizes[t], slice(starts[t], starts[t] + batch_sizes[t])


def _incoming(dh, grad_out, size, rows):
    """The gradient reaching the hidden state of a step: from the next step and the output."""
    return dh[:size] if grad_out is None else dh[:size] + grad_out[rows]


def _composite_layer(mode, x, batch_sizes, h0, c0, weights, reverse):
    """One direction of one layer in ember ops over packed rows ``x`` (N, input_size)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    h, c = h0, c0
    outs = []
    for size, rows in _steps(batch_sizes, reverse):
        xt = x[rows]
        full = size == h.shape[0]
        hp = h if full else h[:size]
        if mode == "LSTM":
            hy, cy = _lstm_cell(xt, hp, c if full else c[:size], w_ih, w_hh, b_ih, b_hh, w_hr)
            c = cy if full else cat([cy, c[size:]])
        elif mode == "GRU":
            hy = _gru_cell(xt, hp, w_ih, w_hh, b_ih, b_hh)
        else:
            hy = _rnn_cell(xt, hp, w_ih, w_hh, b_ih, b_hh, "tanh" if mode == "RNN_TANH" else "relu")
        h = hy if full else cat([hy, h[size:]])
        outs.append(hy)
    return cat(outs[::-1] if reverse else outs), h, c


# ---------------------------------------------------------------------------------------------
# The fused layer: forward and backward on arrays


def _sigmoid_scale(xp, dtype, hidden, gates, sigmoid_cols):
    """Row vectors ``(scale, shift)`` with ``sigmoid(x) = scale * tanh(scale * x) + shift`` on
    the sigmoid columns and ``tanh(x)`` (scale 1, shift 0) elsewhere."""
    scale = xp.ones(gates * hidden, dtype=dtype)
    shift = xp.zeros(gates * hidden, dtype=dtype)
    for gate in sigmoid_cols:
        scale[gate * hidden:(gate + 1) * hidden] = 0.5
        shift[gate * hidden:(gate + 1) * hidden] = 0.5
    return scale, shift


def _activate(xp, pre, scale, shift):
    """Sigmoid and tanh gates in place, as whole-array ops: ``scale*tanh(scale*x)+shift``."""
    pre *= scale
    xp.tanh(pre, out=pre)
    pre *= scale
    pre += shift


def _lstm_forward(xp, x, batch_sizes, h0, c0, w, reverse, keep):
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    hidden = w_hh.shape[0] // 4
    scale, shift = _sigmoid_scale(xp, x.dtype, hidden, 4, (0, 1, 3))
    # sigmoid(x) = 0.5 tanh(x / 2) + 0.5: the halving is folded into the weights and biases
    # (exact: a power of two), leaving tanh and one scale and shift per step
    gates = products.matmul(x, _scaled_transpose(xp, w_ih, scale))  # every timestep's input projection
    if b_ih is not None:
        bias = b_ih + b_hh
        bias *= scale
        gates += bias
    w_hh_t = _scaled_transpose(xp, w_hh, scale)
    w_hr_t = None if w_hr is None else w_hr.T
    n, batch = x.shape[0], h0.shape[0]
    h, c = h0, c0.copy()  # c is updated in place; h is replaced by each step's output
    out = xp.empty((n, h0.shape[1]), dtype=gates.dtype)
    recurrent = xp.empty((batch, 4 * hidden), dtype=gates.dtype)  # h @ w_hh^T of a step
    gate_products = xp.empty((batch, hidden), dtype=gates.dtype)  # i * g of a step
    if keep:
        h_prev = xp.empty_like(out)
        c_prev = xp.empty((n, hidden), dtype=gates.dtype)
        tanh_c = xp.empty_like(c_prev)
    else:
        tanh_c = xp.empty((batch, hidden), dtype=gates.dtype)
    for size, rows in _steps(batch_sizes, reverse):
        hp, cp = h[:size], c[:size]
        a = gates[rows]
        if products.add_product(hp, w_hh_t, a) is None:   # (one GEMM adding into a)
            a += xp.matmul(hp, w_hh_t, out=recurrent[:size])  # into a kept buffer: measurably faster
        xp.tanh(a, out=a)
        a *= scale
        a += shift
        if keep:
            h_prev[rows] = hp
            c_prev[rows] = cp
        cp *= a[:, hidden:2 * hidden]
        cp += xp.multiply(a[:, :hidden], a[:, 2 * hidden:3 * hidden], out=gate_products[:size])
        tc = xp.tanh(cp, out=tanh_c[rows] if keep else tanh_c[:size])
        if w_hr_t is None:
            xp.multiply(a[:, 3 * hidden:], tc, out=out[rows])
        else:
            xp.matmul(a[:, 3 * hidden:] * tc, w_hr_t, out=out[rows])
        h = _next_state(xp, h, out[rows])
    saved = (gates, h_prev, c_prev, tanh_c) if keep else None
    return out, h.copy(), c, saved


# Elman RNN layers of fewer steps stay on NumPy's steps: oneDNN's call has a fixed cost (its
# weights reordered on each call) that NumPy's few cheap steps stay under (BENCHMARKS.md,
# "Recurrent layers"); the LSTM and GRU gain on oneDNN at every length measured.
ELMAN_MIN_STEPS = 16


class _Workspace:
    """What oneDNN's forward of a layer keeps for its backward (an opaque byte array), in
    place of the gate activations and states NumPy's forward keeps."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _dense(a):
    return np.ascontiguousarray(a, np.float32)


def _gru_gates(w):
    """torch's GRU rows (reset, update, new) in oneDNN's order (update, reset, new); the same
    swap takes oneDNN's back to torch's."""
    hidden = w.shape[0] // 3
    return np.concatenate([w[hidden:2 * hidden], w[:hidden], w[2 * hidden:]])


def _onednn_bias(mode, w_ih, b_ih, b_hh):
    """oneDNN's bias of the layer: the LSTM's and the Elman RNN's ``b_ih + b_hh``; the GRU's
    update and reset gates' ``b_ih + b_hh``, then the new gate's ``b_ih`` and its ``b_hh``
    apart (oneDNN's linear-before-reset cell, torch's GRU)."""
    if mode != "GRU":
        return np.zeros(w_ih.shape[0], np.float32) if b_ih is None else _dense(b_ih + b_hh)
    hidden = w_ih.shape[0] // 3
    if b_ih is None:
        return np.zeros(4 * hidden, np.float32)
    both = _gru_gates(b_ih + b_hh)[:2 * hidden]   # (update, reset)
    return _dense(np.concatenate([both, b_ih[2 * hidden:], b_hh[2 * hidden:]]))


def _onednn_layer_forward(mode, xp, x, batch_sizes, h0, c0, w, reverse, keep):
    """oneDNN's RNN primitive for the layer (the LSTM's is torch's CPU kernel) where it
    applies: an LSTM without projection, a GRU or an Elman RNN, the whole batch at every step.
    Returns ``_forward_arrays``' tuple with a ``_Workspace`` as what is kept."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    batch = h0.shape[0]
    if (xp is not np or w_hr is not None or w_ih.dtype != np.float32
            or any(size != batch for size in batch_sizes)
            or (mode.startswith("RNN") and len(batch_sizes) < ELMAN_MIN_STEPS)):
        return None
    x = _dense(x.reshape(len(batch_sizes), batch, x.shape[-1]))
    bias = _onednn_bias(mode, w_ih, b_ih, b_hh)
    if mode == "LSTM":
        result = onednn.rnn.lstm_forward(x, _dense(h0), _dense(c0), _dense(w_ih), _dense(w_hh),
                                         bias, reverse, keep)
    elif mode == "GRU":
        result = _no_cell_state(onednn.rnn.gru_forward(
            x, _dense(h0), _gru_gates(w_ih), _gru_gates(w_hh), bias, reverse, keep))
    else:
        result = _no_cell_state(onednn.rnn.elman_forward(
            x, _dense(h0), _dense(w_ih), _dense(w_hh), bias, mode == "RNN_RELU", reverse, keep))
    if result is None:
        return None
    out, h, c, workspace = result
    return out.reshape(-1, out.shape[-1]), h, c, None if workspace is None else _Workspace(workspace)


def _no_cell_state(result):
    """A GRU's or Elman RNN's ``(out, h_n, workspace)`` as the LSTM's four (``c_n`` None)."""
    return None if result is None else (result[0], result[1], None, result[2])


_layer_forward = KernelChoice("recurrent layer", onednn=_onednn_layer_forward,
                              numpy=lambda *args: _forward_arrays(*args))


def _onednn_layer_gradients(mode, x, h0, c0, w, batch_sizes, reverse, kept, grad_out, grad_h,
                            grad_c, need):
    """The gradients of a layer whose forward ran on oneDNN (``kept``: its output, final
    states and workspace), from oneDNN's backward: ``_layer_gradients``' tuple."""
    out, h_n, c_n, workspace = kept
    batch = h0.shape[0]
    out = out.reshape(x.shape[0] // batch, batch, -1)
    grad_out = np.zeros_like(out) if grad_out is None else _dense(grad_out.reshape(out.shape))
    w_ih, w_hh, b_ih, b_hh, _ = w
    inputs = _dense(x.reshape(out.shape[0], batch, -1))
    bias = _onednn_bias(mode, w_ih, b_ih, b_hh)
    if mode == "LSTM":
        found = onednn.rnn.lstm_backward(inputs, _dense(h0), _dense(c0), _dense(w_ih), _dense(w_hh),
                                         bias, out, h_n, c_n, workspace, grad_out, _dense(grad_h),
                                         _dense(grad_c), reverse)
        if found is None:
            return None
        d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_bias = found
        d_b_ih, d_b_hh = d_bias, d_bias.copy() if need[5] else d_bias
    elif mode != "GRU":
        found = onednn.rnn.elman_backward(inputs, _dense(h0), _dense(w_ih), _dense(w_hh), bias, out,
                                          h_n, workspace, grad_out, _dense(grad_h),
                                          mode == "RNN_RELU", reverse)
        if found is None:
            return None
        d_x, d_h0, d_w_ih, d_w_hh, d_bias = found
        d_c0, d_b_ih, d_b_hh = None, d_bias, d_bias.copy() if need[5] else d_bias
    else:
        found = onednn.rnn.gru_backward(inputs, _dense(h0), _gru_gates(w_ih), _gru_gates(w_hh), bias,
                                        out, h_n, workspace, grad_out, _dense(grad_h), reverse)
        if found is None:
            return None
        d_x, d_h0, d_w_ih, d_w_hh, d_bias = found
        d_c0, d_w_ih, d_w_hh = None, _gru_gates(d_w_ih), _gru_gates(d_w_hh)
        hidden = h0.shape[1]
        both = _gru_gates(d_bias[:3 * hidden])[:2 * hidden]   # (reset, update) of both biases
        d_b_ih = np.concatenate([both, d_bias[2 * hidden:3 * hidden]])
        d_b_hh = np.concatenate([both, d_bias[3 * hidden:]])
    return d_x.reshape(x.shape), d_h0, d_c0, d_w_ih, d_w_hh, d_b_ih, d_b_hh, None


def _recomputed_layer_gradients(mode, x, h0, c0, w, batch_sizes, reverse, kept, grad_out, grad_h,
                                grad_c, need):
    """The same gradients by NumPy's backpropagation through time, after running the steps
    again to record what it reads (oneDNN's workspace is opaque)."""
    kept = _forward_arrays(mode, np, x, batch_sizes, h0, c0, w, reverse, True)[3]
    return _layer_gradients(mode, x, h0, c0, w, batch_sizes, reverse, kept, grad_out, grad_h,
                            grad_c, need)


_onednn_forward_gradients = KernelChoice("recurrent layer backward", onednn=_onednn_layer_gradients,
                                         numpy=_recomputed_layer_gradients)


def _layer_gradients(mode, x, h0, c0, w, batch_sizes, reverse, kept, grad_out, grad_h, grad_c,
                     need):
    """NumPy's backpropagation through time from what its forward kept: the gradients of the
    input rows, h0, c0, w_ih, w_hh, b_ih, b_hh and w_hr (None where ``need`` says so)."""
    xp = namespace_of(x)
    d_in, d_hid, h_prev, d_h0, d_c0, d_w_hr = _backward_arrays(
        mode, xp, grad_out, grad_h, grad_c, batch_sizes, w, reverse, kept)
    d_b_ih = d_in.sum(0) if need[5] else None
    d_b_hh = None
    if need[6]:  # the LSTM's two biases have the same gradient: summed once
        d_b_hh = d_b_ih.copy() if d_hid is d_in and d_b_ih is not None else d_hid.sum(0)
    return (products.matmul(d_in, w[0]) if need[0] else None, d_h0, d_c0,
            products.matmul(d_in.T, x) if need[3] else None,
            products.matmul(d_hid.T, h_prev) if need[4] else None, d_b_ih, d_b_hh, d_w_hr)


def _scaled_transpose(xp, weight, scale):
    """``weight.T * scale`` as a contiguous array (BLAS runs faster on it than on the
    transposed view)."""
    out = xp.empty(weight.shape[::-1], dtype=weight.dtype)
    return xp.multiply(weight.T, scale, out=out)


def _next_state(xp, h, step_out):
    """The hidden state after a step that updated its first rows with ``step_out``: the step's
    output itself when it covers the whole batch, else those rows above the rest of ``h``."""
    size = step_out.shape[0]
    if size == h.shape[0]:
        return step_out
    return xp.concatenate([step_out, h[size:]])


def _lstm_backward(xp, grad_out, grad_h, grad_c, batch_sizes, w, reverse, saved):
    w_hh, w_hr = w[1], w[4]
    gates, h_prev, c_prev, tanh_c = saved
    hidden = c_prev.shape[1]
    deriv = gates * gates  # d(activation)/d(pre-activation): a - a^2, or 1 - a^2 for tanh
    xp.subtract(gates, deriv, out=deriv)
    deriv[:, 2 * hidden:3 * hidden] = 1 - gates[:, 2 * hidden:3 * hidden] ** 2
    tanh_deriv = tanh_c * tanh_c  # 1 - tanh(c)^2, for every step at once
    xp.subtract(1, tanh_deriv, out=tanh_deriv)
    d_gates = xp.empty_like(gates)
    d_hy = xp.empty_like(h_prev) if w_hr is not None else None
    dh, dc = grad_h.copy(), grad_c.copy()
    for size, rows in _steps(batch_sizes, not reverse):
        dh_t = dh[:size]  # overwritten with the previous step's gradient at the end
        if grad_out is not None:
            dh_t += grad_out[rows]
        if w_hr is not None:
            d_hy[rows] = dh_t
            dh_t = dh_t @ w_hr
        a, tc, da = gates[rows], tanh_c[rows], d_gates[rows]
        o = a[:, 3 * hidden:]
        dc_t = dh_t * o
        dc_t *= tanh_deriv[rows]
        dc_t += dc[:size]
        xp.multiply(dc_t, a[:, 2 * hidden:3 * hidden], out=da[:, :hidden])
        xp.multiply(dc_t, c_prev[rows], out=da[:, hidden:2 * hidden])
        xp.multiply(dc_t, a[:, :hidden], out=da[:, 2 * hidden:3 * hidden])
        xp.multiply(dh_t, tc, out=da[:, 3 * hidden:])
        da *= deriv[rows]
        xp.multiply(dc_t, a[:, hidden:2 * hidden], out=dc[:size])
        xp.matmul(da, w_hh, out=dh[:size])
    d_w_hr = None
    if w_hr is not None:
        d_w_hr = products.matmul(d_hy.T, gates[:, 3 * hidden:] * tanh_c)
    return d_gates, d_gates, h_prev, dh, dc, d_w_hr


def _gru_forward(xp, x, batch_sizes, h0, c0, w, reverse, keep):
    w_ih, w_hh, b_ih, b_hh, _ = w
    hidden = w_hh.shape[1]
    gates = products.matmul(x, w_ih.T)  # holds (reset, update, new) once each step has run
    if b_ih is not None:
        gates += b_ih
    scale, shift = _sigmoid_scale(xp, gates.dtype, hidden, 2, (0, 1))
    h = h0.copy()
    n = x.shape[0]
    out = xp.empty((n, hidden), dtype=gates.dtype)
    if keep:
        h_prev = xp.empty_like(out)
        hidden_new = xp.empty_like(out)
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # BLAS is faster on it than on the transposed view
    for size, rows in _steps(batch_sizes, reverse):
        hp = h[:size]
        gh = hp @ w_hh_t
        if b_hh is not None:
            gh += b_hh
        a = gates[rows]
        a[:, :2 * hidden] += gh[:, :2 * hidden]
        _activate(xp, a[:, :2 * hidden], scale, shift)
        new = a[:, 2 * hidden:]
        new += a[:, :hidden] * gh[:, 2 * hidden:]
        xp.tanh(new, out=new)
        hy = out[rows]
        xp.subtract(hp, new, out=hy)
        hy *= a[:, hidden:2 * hidden]
        hy += new
        if keep:
            h_prev[rows] = hp
            hidden_new[rows] = gh[:, 2 * hidden:]
        h[:size] = hy
    saved = (gates, h_prev, hidden_new) if keep else None
    return out, h, None, saved


def _gru_backward(xp, grad_out, grad_h, grad_c, batch_sizes, w, reverse, saved):
    w_hh = w[1]
    gates, h_prev, hidden_new = saved
    hidden = h_prev.shape[1]
    d_input_gates = xp.empty_like(gates)
    d_hidden_gates = xp.empty_like(gates)
    dh = grad_h.copy()
    for size, rows in _steps(batch_sizes, not reverse):
        dh_t = _incoming(dh, grad_out, size, rows)
        a, hp = gates[rows], h_prev[rows]
        reset, update, new = a[:, :hidden], a[:, hidden:2 * hidden], a[:, 2 * hidden:]
        dx, dhg = d_input_gates[rows], d_hidden_gates[rows]
        d_new = dh_t * (1 - update)
        d_new *= 1 - new * new
        dx[:, 2 * hidden:] = d_new
        xp.multiply(d_new, reset, out=dhg[:, 2 * hidden:])
        xp.multiply(d_new, hidden_new[rows], out=dx[:, :hidden])
        xp.multiply(dh_t, hp - new, out=dx[:, hidden:2 * hidden])
        dx[:, :2 * hidden] *= a[:, :2 * hidden] * (1 - a[:, :2 * hidden])
        dhg[:, :2 * hidden] = dx[:, :2 * hidden]
        dh_prev = dhg @ w_hh
        dh_prev += dh_t * update
        dh[:size] = dh_prev
    return d_input_gates, d_hidden_gates, h_prev, dh, None, None


def _elman_forward(xp, x, batch_sizes, h0, c0, w, reverse, keep, relu):
    w_ih, w_hh, b_ih, b_hh, _ = w
    out = products.matmul(x, w_ih.T)  # the input projection, turned into the outputs step by step
    if b_ih is not None:
        out += b_ih
        out += b_hh
    h = h0.copy()
    h_prev = xp.empty_like(out) if keep else None
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # BLAS is faster on it than on the transposed view
    for size, rows in _steps(batch_sizes, reverse):
        hp = h[:size]
        hy = out[rows]
        hy += hp @ w_hh_t
        if relu:
            xp.maximum(hy, 0, out=hy)
        else:
            xp.tanh(hy, out=hy)
        if keep:
            h_prev[rows] = hp
        h[:size] = hy
    return out, h, None, ((out, h_prev) if keep else None)


def _elman_backward(xp, grad_out, grad_h, grad_c, batch_sizes, w, reverse, saved, relu):
    w_hh = w[1]
    out, h_prev = saved
    deriv = (out > 0).astype(out.dtype) if relu else 1 - out * out
    d_pre = xp.empty_like(out)
    dh = grad_h.copy()
    for size, rows in _steps(batch_sizes, not reverse):
        dh_t = _incoming(dh, grad_out, size, rows)
        xp.multiply(dh_t, deriv[rows], out=d_pre[rows])
        xp.matmul(d_pre[rows], w_hh, out=dh[:size])
    return d_pre, d_pre, h_prev, dh, None, None


def _forward_arrays(mode, *args):
    if mode == "LSTM":
        return _lstm_forward(*args)
    if mode == "GRU":
        return _gru_forward(*args)
    return _elman_forward(*args, relu=mode == "RNN_RELU")


def _backward_arrays(mode, *args):
    """Backpropagation through time: ``(d_input_gates, d_hidden_gates, h_prev, d_h0, d_c0,
    d_w_hr)``, the gate gradients (pre-activation) for every row."""
    if mode == "LSTM":
        return _lstm_backward(*args)
    if mode == "GRU":
        return _gru_backward(*args)
    return _elman_backward(*args, relu=mode == "RNN_RELU")


class _RnnLayerNode(Node):
    """One direction of one recurrent layer. Inputs: (input, h0, c0, w_ih, w_hh, b_ih, b_hh,
    w_hr); outputs: (output, h_n, c_n). It saves its inputs and, after them, the arrays its
    forward kept for backpropagation through time (gate activations, previous states) as
    tensors, as torch's node saves its workspace."""
    __slots__ = ()
    jvp = jvp_by_transposition
    on_onednn = False   # whether the forward ran on oneDNN (what it kept is its workspace)

    def backward(self, *grads):
        grads = tuple(grads) + (None,) * (3 - len(grads))
        return self._backward_by_recomputation(self.saved_tensors, grads)

    def backward_arrays(self, *grads):
        grads = tuple(grads) + (None,) * (3 - len(grads))
        saved = self.saved_tensors
        x, h0, c0, *weights = saved[:_N_INPUTS]
        kept = tuple(None if t is None else t._data for t in saved[_N_INPUTS:])
        data = x._data.reshape(-1, x._data.shape[-1])
        xp = namespace_of(data)
        grad_out, grad_h, grad_c = (None if g is None else g._data for g in grads)
        if grad_out is not None:
            grad_out = grad_out.reshape(data.shape[0], -1)
        if grad_h is None:
            grad_h = xp.zeros_like(h0._data)
        if c0 is not None and grad_c is None:
            grad_c = xp.zeros_like(c0._data)
        w = tuple(None if t is None else t._data for t in weights)
        need = [fn is not None for fn, _ in self.next_functions]
        gradients = _onednn_forward_gradients if self.on_onednn else _layer_gradients
        arrays = gradients(self.mode, data, h0._data, None if c0 is None else c0._data, w,
                           self.batch_sizes, self.reverse, kept, grad_out, grad_h, grad_c, need)
        d_x = arrays[0]
        arrays = (None if d_x is None else d_x.reshape(x._data.shape),) + tuple(arrays[1:])
        return tuple(None if g is None or not n else make(g) for g, n in zip(arrays, need))

    def _backward_by_recomputation(self, saved, grads):
        """create_graph: differentiate the same layer written in ember ops."""
        from ...autograd import grad as autograd_grad
        saved = saved[:_N_INPUTS]
        x, h0, c0, *weights = saved
        wanted = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        with enable_grad():
            outs = _composite_layer(self.mode, x.reshape(-1, x.shape[-1]), self.batch_sizes, h0,
                                    c0, weights, self.reverse)
        pairs = [(o, g.reshape(o.shape)) for o, g in zip(outs, grads)
                 if o is not None and g is not None]
        found = autograd_grad([o for o, _ in pairs], [saved[i] for i in wanted],
                              [g for _, g in pairs], create_graph=True, allow_unused=True)
        result = [None] * len(saved)
        for i, g in zip(wanted, found):
            result[i] = g
        return tuple(result)


class MkldnnRnnLayerBackward0(_RnnLayerNode):
    """An LSTM layer (torch's CPU name for it)."""
    __slots__ = ()


class RnnLayerBackward0(_RnnLayerNode):
    """A GRU or Elman RNN layer; torch records these step by step on CPU."""
    __slots__ = ()


class ThnnFusedLstmCellBackward0(_RnnLayerNode):
    """One LSTM cell step (``lstm_cell``, ``nn.LSTMCell``): a layer of one time step (torch's
    name for its fused cell)."""
    __slots__ = ()


class ThnnFusedGruCellBackward0(_RnnLayerNode):
    """One GRU cell step (``gru_cell``, ``nn.GRUCell``): a layer of one time step."""
    __slots__ = ()


_LAYER_NODES = {"LSTM": MkldnnRnnLayerBackward0, "GRU": RnnLayerBackward0,
                "RNN_TANH": RnnLayerBackward0, "RNN_RELU": RnnLayerBackward0}
_CELL_NODES = {"LSTM": ThnnFusedLstmCellBackward0, "GRU": ThnnFusedGruCellBackward0}


def _rnn_layer(mode, x, batch_sizes, h0, c0, weights, reverse, node_class=None):
    """One direction of one layer over ``x`` (rows ``(N, input_size)``, or ``(T, B,
    input_size)`` when every batch size is ``B``): returns ``(output, h_n, c_n)`` with
    ``c_n`` None unless LSTM. ``node_class``: the autograd node recorded (by default the
    layer's)."""
    inputs = (x, h0, c0) + tuple(weights)
    keep = grad_state.grad_enabled and any(t is not None and t._requires_grad for t in inputs)
    data = x._data.reshape(-1, x._data.shape[-1])
    xp = namespace_of(data)
    arrays = tuple(None if w is None else w._data for w in weights)
    # a layer on the kernel choice (oneDNN's RNN primitives); a cell's step on NumPy's
    forward = _layer_forward if node_class is None else _forward_arrays
    out, h, c, saved = forward(mode, xp, data, batch_sizes, h0._data,
                               None if c0 is None else c0._data, arrays, reverse, keep)
    out = make(out.reshape(x._data.shape[:-1] + (out.shape[-1],)))
    h = make(h)
    c = None if c is None else make(c)
    if keep:
        node = record(node_class or _LAYER_NODES[mode], inputs, out, h, c)
        node.on_onednn = saved.__class__ is _Workspace
        if node.on_onednn:
            node.save(*inputs, out, h, c, make(saved.array))
        else:
            node.save(*inputs, *(make(a) for a in saved))
        node.mode, node.batch_sizes, node.reverse = mode, batch_sizes, reverse
    return out, h, c


# ---------------------------------------------------------------------------------------------
# Cells (torch.lstm_cell, torch.gru_cell): one node a step


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step from ``hx = (h, c)``: ``(h', c')``."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    if _cell_is_fused("LSTM", input, (h, c), w_ih, w_hh, b_ih, b_hh):
        hy, _, cy = _rnn_layer("LSTM", input, [input.shape[0]], h, c, (w_ih, w_hh, b_ih, b_hh, None),
                               False, _CELL_NODES["LSTM"])
        return hy, cy
    return _lstm_cell(input, h, c, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``h'``."""
    if _cell_is_fused("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh):
        return _rnn_layer("GRU", input, [input.shape[0]], hx, None, (w_ih, w_hh, b_ih, b_hh, None),
                          False, _CELL_NODES["GRU"])[0]
    return _gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def check_cell_sizes(input, states, input_size, hidden_size):
    """torch's cell checks: the input's feature size, then each state's batch and size."""
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{input_size}")
    for index, state in enumerate(states):
        if input.size(0) != state.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{index} "
                               f"batch size {state.size(0)}")
        if state.size(1) != hidden_size:
            raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got "
                               f"{state.size(1)}, expected {hidden_size}")


def _cell_is_fused(mode, input, states, w_ih, w_hh, b_ih, b_hh):
    """torch's checks of a cell's arguments (raising its errors), then whether the fused layer
    kernel takes them: 2-D tensors of one dtype and device, both biases or neither, each of
    the gates' size. Other cases run the cell in ember ops, whose own checks then apply."""
    gates = _GATES[mode]
    hidden = w_hh.size(1)
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.size(0) != gates * hidden:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden}, but got {w.size(0)}")
    check_cell_sizes(input, states, w_ih.size(1), hidden)
    if (b_ih is None) != (b_hh is None):
        return False
    tensors = (input, *states, w_ih, w_hh) + (() if b_ih is None else (b_ih, b_hh))
    arrays = [t._data for t in tensors]
    first = arrays[0]
    if first.dtype.kind != "f" or (b_ih is not None and not (
            arrays[-2].shape == arrays[-1].shape == (gates * hidden,))):
        return False
    for a in arrays[:len(states) + 3]:
        if a.ndim != 2:
            return False
    for a in arrays:
        if a.__class__ is not first.__class__ or a.dtype != first.dtype:
            return False
    return first.__class__ is np.ndarray or all(t.device == input.device for t in tensors)
