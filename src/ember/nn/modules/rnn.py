"""Recurrent layers: RNN, LSTM, GRU and their cells (the layer and cell computations are in
``nn/functional/recurrent.py``)."""
import math
import numbers
import warnings

from ...ops.creation import empty, zeros
from ...ops.shape import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from ..functional.recurrent import (_GATES, _rnn_cell, _rnn_layer, check_cell_sizes, gru_cell,
                                    lstm_cell)

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


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
        check_cell_sizes(input, states, self.input_size, self.hidden_size)

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
        return gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


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
        ret = lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else (ret[0].squeeze(0), ret[1].squeeze(0))
