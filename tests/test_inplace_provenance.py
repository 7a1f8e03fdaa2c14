"""When backward finds a saved tensor modified in place, ember's error names what saved it and,
under anomaly detection, the in-place op that modified it and the line of user code that ran
it (beyond torch, whose message stops at the versions). The message's start is torch's."""
import inspect
import re
import warnings

import pytest
import torch

import ember


@pytest.fixture
def anomaly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(check_nan=False):
            yield


def _error(fn, lib=ember):
    with pytest.raises(RuntimeError) as info:
        fn(lib)
    return str(info.value)


def _line_of(text):
    """The line number of ``text`` in this file."""
    source, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    for number, line in enumerate(source, start or 1):
        if text in line:
            return number
    raise AssertionError(text)


def _modify_saved_input(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)  # the modification
    z.sum().backward()


def test_message_starts_as_torchs_and_names_the_saving_node():
    ours, theirs = _error(_modify_saved_input), _error(_modify_saved_input, torch)
    assert ours.startswith(theirs.replace("torch.", "ember.").replace("[ember.FloatTensor", "[torch.FloatTensor")
                           + " ")
    assert "It was saved for the backward of MulBackward0;" in ours


def test_without_anomaly_detection_the_hint_says_how_to_find_the_modifier():
    message = _error(_modify_saved_input)
    assert "with anomaly detection on, this message also names the in-place operation" in message
    assert "last modified" not in message


def test_under_anomaly_detection_the_op_and_line_are_named(anomaly):
    message = _error(_modify_saved_input)
    line = _line_of("y.add_(1)  # the modification")
    assert f"it was last modified in place by add_() at {__file__}:{line}." in message
    assert message.endswith("y.add_(1)  # the modification")


def _saved_then(modify):
    """A graph that saves ``w`` (for MulBackward0), then ``modify(w)``."""
    def run(lib):
        x = lib.ones(4, requires_grad=True)
        w = lib.full((4,), 0.5)
        out = (x * w).sum()
        modify(lib, w)
        out.backward()
    return run


MODIFIERS = {  # the op the message names: modification
    "add_": lambda lib, w: w.add_(1),
    "mul_": lambda lib, w: w.__imul__(3),
    "__setitem__": lambda lib, w: w.__setitem__(0, 2.0),
    "exp_": lambda lib, w: w.exp_(),
    "relu": lambda lib, w: lib.nn.functional.relu(w, inplace=True),
    "zero_": lambda lib, w: w.zero_(),
    "copy_": lambda lib, w: w.copy_(lib.ones(4)),
    "clamp_": lambda lib, w: w.clamp_(0, 0.1),
    "masked_fill_": lambda lib, w: w.masked_fill_(w > 0, 1.0),
    "index_add_": lambda lib, w: w.index_add_(0, lib.tensor([1]), lib.ones(1)),
    "uniform_": lambda lib, w: w.uniform_(),
    "fill_": lambda lib, w: w[1:3].fill_(7),  # through a view
}


@pytest.mark.parametrize("op", list(MODIFIERS))
def test_each_kind_of_in_place_op_is_named(anomaly, op):
    modify = MODIFIERS[op]
    torch_message = _error(_saved_then(modify), torch)
    assert "modified by an inplace operation" in torch_message
    message = _error(_saved_then(modify))
    line = inspect.getsourcelines(modify)[1]
    assert f"it was last modified in place by {op}() at {__file__}:{line}." in message


def test_an_optimizer_step_is_named_with_the_line_that_called_it(anomaly):
    w = ember.nn.Parameter(ember.ones(3))
    out = (w * w).sum()
    w.grad = ember.ones(3)
    opt = ember.optim.SGD([w], lr=0.1)
    opt.step()  # the step
    with pytest.raises(RuntimeError) as info:
        out.backward()
    line = _line_of("opt.step()  # the step")
    assert re.search(rf"last modified in place by \w+\(\) at {re.escape(__file__)}:{line}\.", str(info.value))


def test_a_record_from_an_older_version_is_not_shown():
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(check_nan=False):
            w.add_(1)
    out = (x * w).sum()
    w.mul_(2)  # made without anomaly detection: not recorded
    message = _error(lambda lib: out.backward())
    assert "last modified" not in message
    assert "with anomaly detection on" in message


def test_recording_stops_when_anomaly_detection_ends():
    from ember.autograd.graph import modifier_recording
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            assert modifier_recording.enabled
    assert not modifier_recording.enabled
    with ember.autograd.set_detect_anomaly(True):
        assert modifier_recording.enabled
    assert not modifier_recording.enabled
    w = ember.ones(2)
    w.add_(1)
    assert w._version_counter == [1]
