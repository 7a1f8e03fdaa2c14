"""Recurrent layers: RNN, LSTM, GRU and their cells.

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
import math
import numbers
import warnings

from ...autograd.grad_mode import enable_grad
from ...ops.creation import empty, zeros
from ...ops.shape import cat, stack
from ...ops._common import Node, grad_state, make, namespace_of, set_history
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---------------------------------------------------------------------------------------------
# Cells in ember ops: the cell modules, and the recomputation that gives higher-order gradients


def _lstm_cell(input, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One LSTM step: ``(h', c')``; ``h'`` projected by ``w_hr`` when given."""
    gates = F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    if w_hr is not None:
        hy = F.linear(hy, w_hr)
    return hy, cy


def _gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``h' = n + z * (h - n)``."""
    i_r, i_z, i_n = F.linear(input, w_ih, b_ih).chunk(3, 1)
    h_r, h_z, h_n = F.linear(hx, w_hh, b_hh).chunk(3, 1)
    reset = (i_r + h_r).sigmoid()
    update = (i_z + h_z).sigmoid()
    new = (i_n + reset * h_n).tanh()
    return (hx - new) * update + new


def _rnn_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    pre = F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)
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
    gates = x @ _scaled_transpose(xp, w_ih, scale)  # every timestep's input projection at once
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
    products = xp.empty((batch, hidden), dtype=gates.dtype)  # i * g of a step
    if keep:
        h_prev = xp.empty_like(out)
        c_prev = xp.empty((n, hidden), dtype=gates.dtype)
        tanh_c = xp.empty_like(c_prev)
    else:
        tanh_c = xp.empty((batch, hidden), dtype=gates.dtype)
    for size, rows in _steps(batch_sizes, reverse):
        hp, cp = h[:size], c[:size]
        a = gates[rows]
        a += xp.matmul(hp, w_hh_t, out=recurrent[:size])  # into a kept buffer: measurably faster
        xp.tanh(a, out=a)
        a *= scale
        a += shift
        if keep:
            h_prev[rows] = hp
            c_prev[rows] = cp
        cp *= a[:, hidden:2 * hidden]
        cp += xp.multiply(a[:, :hidden], a[:, 2 * hidden:3 * hidden], out=products[:size])
        tc = xp.tanh(cp, out=tanh_c[rows] if keep else tanh_c[:size])
        if w_hr_t is None:
            xp.multiply(a[:, 3 * hidden:], tc, out=out[rows])
        else:
            xp.matmul(a[:, 3 * hidden:] * tc, w_hr_t, out=out[rows])
        h = _next_state(xp, h, out[rows])
    saved = (gates, h_prev, c_prev, tanh_c) if keep else None
    return out, h.copy(), c, saved


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
        d_w_hr = d_hy.T @ (gates[:, 3 * hidden:] * tanh_c)
    return d_gates, d_gates, h_prev, dh, dc, d_w_hr


def _gru_forward(xp, x, batch_sizes, h0, c0, w, reverse, keep):
    w_ih, w_hh, b_ih, b_hh, _ = w
    hidden = w_hh.shape[1]
    gates = x @ w_ih.T  # holds (reset, update, new) once each step has run
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
    out = x @ w_ih.T  # the input projection, turned into the outputs step by step
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
    w_hr); outputs: (output, h_n, c_n)."""
    __slots__ = ()

    def backward(self, *grads):
        grads = tuple(grads) + (None,) * (3 - len(grads))
        return self._backward_by_recomputation(self.saved_tensors, grads)

    def backward_arrays(self, *grads):
        grads = tuple(grads) + (None,) * (3 - len(grads))
        x, h0, c0, *weights = self.saved_tensors
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
        d_in, d_hid, h_prev, d_h0, d_c0, d_w_hr = _backward_arrays(
            self.mode, xp, grad_out, grad_h, grad_c, self.batch_sizes, w, self.reverse,
            self.arrays)
        need = [fn is not None for fn, _ in self.next_functions]
        d_b_ih = d_in.sum(0) if need[5] else None
        d_b_hh = None
        if need[6]:  # the LSTM's two biases have the same gradient: summed once
            d_b_hh = d_b_ih.copy() if d_hid is d_in and d_b_ih is not None else d_hid.sum(0)
        arrays = (
            (d_in @ w[0]).reshape(x._data.shape) if need[0] else None, d_h0, d_c0,
            d_in.T @ data if need[3] else None, d_hid.T @ h_prev if need[4] else None,
            d_b_ih, d_b_hh, d_w_hr)
        return tuple(None if g is None or not n else make(g) for g, n in zip(arrays, need))

    def _backward_by_recomputation(self, saved, grads):
        """create_graph: differentiate the same layer written in ember ops."""
        from ...autograd import grad as autograd_grad
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

    def release(self):
        self.arrays = None
        super().release()


class MkldnnRnnLayerBackward0(_RnnLayerNode):
    """An LSTM layer (torch's CPU name for it)."""
    __slots__ = ()


class RnnLayerBackward0(_RnnLayerNode):
    """A GRU or Elman RNN layer; torch records these step by step on CPU."""
    __slots__ = ()


def _rnn_layer(mode, x, batch_sizes, h0, c0, weights, reverse):
    """One direction of one layer over ``x`` (rows ``(N, input_size)``, or ``(T, B,
    input_size)`` when every batch size is ``B``): returns ``(output, h_n, c_n)`` with
    ``c_n`` None unless LSTM."""
    inputs = (x, h0, c0) + tuple(weights)
    keep = grad_state.grad_enabled and any(t is not None and t._requires_grad for t in inputs)
    data = x._data.reshape(-1, x._data.shape[-1])
    xp = namespace_of(data)
    arrays = tuple(None if w is None else w._data for w in weights)
    out, h, c, saved = _forward_arrays(mode, xp, data, batch_sizes, h0._data,
                                       None if c0 is None else c0._data, arrays, reverse, keep)
    out = make(out.reshape(x._data.shape[:-1] + (out.shape[-1],)))
    h = make(h)
    c = None if c is None else make(c)
    if keep:
        node = (MkldnnRnnLayerBackward0 if mode == "LSTM" else RnnLayerBackward0)(inputs)
        node.save(*inputs)
        node.mode, node.batch_sizes, node.reverse, node.arrays = mode, batch_sizes, reverse, saved
        for i, t in enumerate((out, h, c)):
            if t is not None:
                set_history(t, node, i)
    return out, h, c


# ---------------------------------------------------------------------------------------------
# Modules


def _empty(*shape, device=None, dtype=None):
    return empty(*shape, device=device, dtype=dtype)


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """Base class for RNN modules (RNN, LSTM, GRU): parameters, their initialization and the
    checks every forward makes."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                       proj_size)
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input_size)),
                          ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_empty(*shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each layer and direction, as lists."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Reset parameter data pointers for faster code paths; a no-op here (as in torch
        without cuDNN)."""

    def reset_parameters(self):
        """Every weight and bias uniform in +-1/sqrt(hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks ----------------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- running ---------------------------------------------------------------------------
    def _layer_weights(self, layer, direction):
        suffix = f"_l{layer}{'_reverse' if direction else ''}"
        get = lambda stem: getattr(self, stem + suffix)  # noqa: E731
        biases = (get("bias_ih"), get("bias_hh")) if self.bias else (None, None)
        return (get("weight_ih"), get("weight_hh")) + biases + (
            get("weight_hr") if self.proj_size > 0 else None,)

    def _run(self, input, h0, c0, batch_sizes):
        """All layers over time-major ``input`` (or packed rows): ``(output, h_n, c_n)``."""
        if batch_sizes is None:
            batch_sizes = [input.shape[1]] * input.shape[0]
        num_directions = 2 if self.bidirectional else 1
        hs, cs = [], []
        layer_input = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                out, h, c = _rnn_layer(self.mode, layer_input, batch_sizes, h0[k],
                                       None if c0 is None else c0[k],
                                       self._layer_weights(layer, direction), direction == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_input = outs[0] if num_directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, stack(hs), None if c0 is None else stack(cs)

    def _unpack(self, input):
        """(input, batch_sizes, sorted_indices, unsorted_indices) of a tensor or packed input."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, [int(b) for b in batch_sizes.tolist()], sorted_indices, unsorted_indices
        dims = input.dim()
        if dims not in (2, 3):
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {dims}D{tail}")
        return input, None, None, None

    def _zeros(self, input, batch_sizes, size):
        num_directions = 2 if self.bidirectional else 1
        return zeros(self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                         size, dtype=input.dtype, device=input.device)

    def _output(self, orig_input, output, unsorted_indices, is_batched):
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, orig_input.batch_sizes, orig_input.sorted_indices,
                                  unsorted_indices)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
        return output

    def _time_major(self, input, batch_sizes):
        if batch_sizes is None and self.batch_first:
            return input.transpose(0, 1)
        return input


def _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                   proj_size):
    if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
            or isinstance(dropout, bool)):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNN(RNNBase):
    """Applies a multi-layer Elman RNN with tanh or ReLU non-linearity to an input sequence:
    ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    Input ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``), ``(L, H_in)`` unbatched,
    or a PackedSequence; returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return _single_state_forward(self, input, hx)


def _single_state_forward(self, input, hx):
    """RNN's and GRU's forward: ``(output, h_n)``."""
    orig_input = input
    input, batch_sizes, sorted_indices, unsorted_indices = self._unpack(input)
    is_batched = batch_sizes is not None or input.dim() == 3
    if batch_sizes is None:
        input, hx = _batch_single_state(input, hx, is_batched, self.batch_first)
    if hx is None:
        hx = self._zeros(input, batch_sizes, self.hidden_size)
    else:
        hx = self.permute_hidden(hx, sorted_indices)
    self.check_forward_args(input, hx, batch_sizes)
    output, hidden, _ = self._run(self._time_major(input, batch_sizes), hx, None, batch_sizes)
    output = self._output(orig_input, output, unsorted_indices, is_batched)
    if not is_batched:
        hidden = hidden.squeeze(1)
    return output, self.permute_hidden(hidden, unsorted_indices)


def _batch_single_state(input, hx, is_batched, batch_first):
    """Unbatched input and state get their batch dimension; states' dims are checked."""
    if not is_batched:
        input = input.unsqueeze(0 if batch_first else 1)
        if hx is not None:
            if hx.dim() != 2:
                raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
    elif hx is not None and hx.dim() != 3:
        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D "
                           "tensor")
    return input, hx


class GRU(RNNBase):
    """Applies a multi-layer gated recurrent unit (GRU) RNN to an input sequence:
    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z = sigmoid(W_iz x + b_iz + W_hz h +
    b_hz)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return _single_state_forward(self, input, hx)


class LSTM(RNNBase):
    """Applies a multi-layer long short-term memory (LSTM) RNN to an input sequence. Each
    layer computes ``i, f, g, o`` gates, ``c' = f * c + i * g`` and ``h' = o * tanh(c')``
    (projected by ``W_hr`` when ``proj_size > 0``); returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices = self._unpack(input)
        is_batched = batch_sizes is not None or input.dim() == 3
        if batch_sizes is None and not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(input, batch_sizes, real_hidden_size),
                  self._zeros(input, batch_sizes, self.hidden_size))
        else:
            hx = self.permute_hidden(self._batched_states(hx, is_batched), sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, h_n, c_n = self._run(self._time_major(input, batch_sizes), hx[0], hx[1],
                                     batch_sizes)
        output = self._output(orig_input, output, unsorted_indices, is_batched)
        if not is_batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, self.permute_hidden((h_n, c_n), unsorted_indices)

    @staticmethod
    def _batched_states(hx, is_batched):
        h, c = hx
        if is_batched:
            if h.dim() != 3 or c.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h.dim()}-D, {c.dim()}-D) tensors")
            return h, c
        if h.dim() != 2 or c.dim() != 2:
            raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                               f"({h.dim()}-D, {c.dim()}-D) tensors")
        return h.unsqueeze(1), c.unsqueeze(1)


# ---------------------------------------------------------------------------------------------
# Cells


class RNNCellBase(Module):
    """Base class of the cells: ``weight_ih``, ``weight_hh`` and (with ``bias``) ``bias_ih``,
    ``bias_hh``, all uniform in +-1/sqrt(hidden_size)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty(num_chunks * hidden_size, input_size, device=device,
                                          dtype=dtype))
        self.weight_hh = Parameter(_empty(num_chunks * hidden_size, hidden_size, device=device,
                                          dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, states):
        """torch's cell checks: the input's feature size, then each state's batch and size."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                               f"{self.input_size}")
        for index, state in enumerate(states):
            if input.size(0) != state.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{index} "
                                   f"batch size {state.size(0)}")
            if state.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got "
                                   f"{state.size(1)}, expected {self.hidden_size}")

    def _batched(self, name, input, states, what):
        """Input and states with a batch dimension (``what`` names the states in errors)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for label, state in what(states):
            if state is not None and state.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {state.dim()}D "
                                 "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        return input, is_batched

    def _zeros(self, input):
        return zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """An Elman RNN cell with tanh or ReLU non-linearity:
    ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return _single_state_cell_forward(self, "RNNCell", input, hx)

    def _step(self, input, hx):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return _rnn_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                         self.nonlinearity)


class GRUCell(RNNCellBase):
    """A gated recurrent unit (GRU) cell: ``r``, ``z`` and ``n`` gates as in :class:`GRU`,
    ``h' = (1 - z) * n + z * h``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return _single_state_cell_forward(self, "GRUCell", input, hx)

    def _step(self, input, hx):
        return _gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


def _single_state_cell_forward(cell, name, input, hx):
    """RNNCell's and GRUCell's forward: ``h'``."""
    input, is_batched = cell._batched(name, input, hx, lambda s: [("hidden", s)])
    if hx is None:
        hx = cell._zeros(input)
    elif not is_batched:
        hx = hx.unsqueeze(0)
    cell._check(input, (hx,))
    ret = cell._step(input, hx)
    return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory (LSTM) cell: gates ``i, f, g, o``, ``c' = f * c + i * g``,
    ``h' = o * tanh(c')``; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(
            "LSTMCell", input, hx, lambda s: [] if s is None else [(f"hx[{i}]", v)
                                                                   for i, v in enumerate(s)])
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check(input, hx)
        ret = _lstm_cell(input, hx[0], hx[1], self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)
        return ret if is_batched else (ret[0].squeeze(0), ret[1].squeeze(0))
