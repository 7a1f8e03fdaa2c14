"""ember.utils.tensorboard.SummaryWriter: event files written through tensorboardX, read back
with TensorBoard's own event reader."""
import numpy as np
import pytest

import ember

pytest.importorskip("tensorboardX")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

from ember.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(log_dir):
    acc = event_accumulator.EventAccumulator(str(log_dir), size_guidance={"tensors": 0})
    acc.Reload()
    return acc


def test_scalars_histogram_images_and_text_read_back(tmp_path):
    values = ember.arange(100, dtype=ember.float32)
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        assert writer.get_logdir() == str(tmp_path)
        for step in range(3):
            writer.add_scalar("loss", ember.tensor(0.5 * step), step)
        writer.add_scalar("lr", 0.1, 0)
        writer.add_histogram("weights", values, 0)
        writer.add_image("chw", ember.rand(3, 4, 5), 0)
        writer.add_image("hwc", ember.rand(4, 5, 3), 0, dataformats="HWC")
        writer.add_text("note", "hello ember", 0)
    acc = _read(tmp_path)
    assert [(s.step, s.value) for s in acc.Scalars("loss")] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert acc.Scalars("lr")[0].value == pytest.approx(0.1)
    hist = acc.Histograms("weights")[0].histogram_value
    assert (hist.num, hist.min, hist.max, hist.sum) == (100, 0, 99, float(np.arange(100).sum()))
    for tag in ("chw", "hwc"):
        image = acc.Images(tag)[0]
        assert (image.height, image.width) == (4, 5)
    assert "note/text_summary" in acc.Tags()["tensors"]


def test_add_scalars_writes_one_run_per_key(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_scalars("acc", {"train": ember.tensor(0.9), "test": 0.8}, 1)
    writer.close()
    train = _read(tmp_path / "acc_train").Scalars("acc")
    test = _read(tmp_path / "acc_test").Scalars("acc")
    assert train[0].value == pytest.approx(0.9) and test[0].value == pytest.approx(0.8)


def test_add_hparams_and_flush(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_hparams({"lr": 0.01, "batch": 32}, {"hparam/accuracy": ember.tensor(0.97)})
    writer.flush()
    writer.close()
    runs = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(runs) == 1
    assert _read(runs[0]).Scalars("hparam/accuracy")[0].value == pytest.approx(0.97)
    with pytest.raises(TypeError, match="dictionary"):
        SummaryWriter(log_dir=str(tmp_path / "x")).add_hparams([("lr", 1)], {})


def test_add_graph_writes_the_traced_graph(tmp_path):
    nn = ember.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.body(x) * 2).softmax(-1)

    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_graph(Net(), ember.ones(3, 4))
    graph = _read(tmp_path).Graph()
    nodes = {n.name: n for n in graph.node}
    assert "input/x" in nodes and nodes["input/x"].op == "IO Node"
    linear = nodes["Net/Sequential[body]/Linear[0]/body_0"]
    assert linear.op == "ember.nn.Linear" and list(linear.input) == ["input/x"]
    relu = nodes["Net/Sequential[body]/ReLU[1]/body_1"]
    assert relu.op == "ember.nn.ReLU"
    assert [d.size for d in relu.attr["_output_shapes"].list.shape[0].dim] == [3, 8]
    mul = next(n for n in graph.node if n.op == "operator.mul")
    assert list(mul.input) == [relu.name] and b"2" in mul.attr["attr"].s
    softmax = next(n for n in graph.node if n.op == "ember.Tensor.softmax")
    assert nodes["output/output"].input == [softmax.name]
