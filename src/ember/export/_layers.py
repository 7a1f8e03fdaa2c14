"""Functions an exported graph calls where a layer's own code runs a fused kernel the recorder
cannot see into: each is one node of the graph, written so that it follows the input's
shape when the graph runs."""
from ..nn.functional.recurrent import _rnn_layer

__all__ = ["recurrent_layer"]


def recurrent_layer(mode, input, h0, c0, weights, reverse):
    """One direction of one recurrent layer (``mode`` "RNN_TANH", "RNN_RELU", "LSTM" or "GRU")
    over a time-major ``input`` (T, B, input_size): ``(output, h_n, c_n)``, ``c_n`` None unless
    LSTM. Every time step has the whole batch, counted when it runs."""
    return _rnn_layer(mode, input, [input.shape[1]] * input.shape[0], h0, c0, weights, reverse)


def recording_rnn_layer(recorded_layer, recorded_packed):
    """What ``nn.modules.rnn`` calls during an export: a dense sequence records a
    ``recurrent_layer`` node; a packed one records the kernel with its fixed batch sizes."""
    def rnn_layer(mode, x, batch_sizes, h0, c0, weights, reverse):
        if x.dim() == 3:
            return recorded_layer(mode, x, h0, c0, weights, reverse)
        return recorded_packed(mode, x, batch_sizes, h0, c0, weights, reverse)
    return rnn_layer
