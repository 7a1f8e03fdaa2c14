"""Functions a recorded graph calls where a layer's own code runs a fused kernel the recorder
cannot see into: each is one node of the graph, written so that it follows the input's shape
when the graph runs. ``ember.export`` and ``ember.compile``'s capture both record them."""
from ..nn.functional.recurrent import _rnn_layer

__all__ = ["recurrent_layer", "recording_rnn_layer"]


def recurrent_layer(mode, input, h0, c0, weights, reverse):
    """One direction of one recurrent layer (``mode`` "RNN_TANH", "RNN_RELU", "LSTM" or "GRU")
    over a time-major ``input`` (T, B, input_size): ``(output, h_n, c_n)``, ``c_n`` None unless
    LSTM. Every time step has the whole batch, counted when it runs."""
    return _rnn_layer(mode, input, [input.shape[1]] * input.shape[0], h0, c0, weights, reverse)


def recording_rnn_layer():
    """What ``nn.modules.rnn`` calls (as ``_rnn_layer``) during a recording: a dense sequence
    records one ``recurrent_layer`` call, as torch records ``aten.lstm``; a packed one records
    the kernel with its fixed batch sizes."""
    from ._recorder import _recording_function
    recorded_layer = _recording_function(recurrent_layer, "ember")
    recorded_packed = _recording_function(_rnn_layer, "ember")

    def rnn_layer(mode, x, batch_sizes, h0, c0, weights, reverse):
        if x.dim() == 3:
            return recorded_layer(mode, x, h0, c0, weights, reverse)
        return recorded_packed(mode, x, batch_sizes, h0, c0, weights, reverse)
    return rnn_layer
