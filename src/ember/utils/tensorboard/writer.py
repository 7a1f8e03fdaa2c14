"""``SummaryWriter``: torch.utils.tensorboard's writer over tensorboardX, taking ember tensors."""
import os

import tensorboardX
import tensorboardX.proto.event_pb2

__all__ = ["SummaryWriter"]


def _to_numpy(value):
    """An ember tensor as a NumPy array (other values unchanged)."""
    if hasattr(value, "_data") and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return value


def _to_scalar(value):
    if hasattr(value, "_data") and hasattr(value, "item"):
        return value.detach().item()
    return value


class SummaryWriter:
    """Writes entries directly to event files in the log_dir to be consumed by TensorBoard.

    Args:
        log_dir: save directory location. Default is runs/**CURRENT_DATETIME_HOSTNAME**.
        comment: comment log_dir suffix appended to the default ``log_dir``.
        purge_step: events with a step at or above it are purged from a crashed run's log.
        max_queue: size of the queue for pending events before one of the 'add' calls forces
            a flush to disk.
        flush_secs: how often, in seconds, to flush the pending events to disk.
        filename_suffix: suffix added to all event filenames in the log_dir directory.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        self._writer = tensorboardX.SummaryWriter(
            logdir=log_dir, comment=comment, purge_step=purge_step, max_queue=max_queue,
            flush_secs=flush_secs, filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir
        self._options = dict(max_queue=max_queue, flush_secs=flush_secs,
                             filename_suffix=filename_suffix)
        self._scalars_writers = {}  # add_scalars' runs, by directory

    def get_logdir(self):
        """Return the directory where event files will be written."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Add scalar data to summary. (``new_style`` and ``double_precision`` are accepted for
        torch's signature; tensorboardX writes the classic float32 scalar summary.)"""
        self._writer.add_scalar(tag, _to_scalar(scalar_value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Add many scalar data to summary: each key is its own run, written (as torch does)
        under ``log_dir/<main_tag>_<key>`` with the tag ``main_tag``."""
        for key, value in tag_scalar_dict.items():
            run_dir = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + key)
            writer = self._scalars_writers.get(run_dir)
            if writer is None:
                writer = self._scalars_writers[run_dir] = tensorboardX.SummaryWriter(
                    logdir=run_dir, **self._options)
            writer.add_scalar(main_tag, _to_scalar(value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Add histogram to summary."""
        self._writer.add_histogram(tag, _to_numpy(values), global_step, bins, walltime, max_bins)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Add image data to summary. ``img_tensor`` is (3, H, W) by default; ``dataformats``
        names other layouts (``"HWC"``, ``"HW"``). Float images are in [0, 1]."""
        self._writer.add_image(tag, _to_numpy(img_tensor), global_step, walltime,
                               dataformats=dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Add batched image data to summary (shown as a grid)."""
        self._writer.add_images(tag, _to_numpy(img_tensor), global_step, walltime,
                                dataformats=dataformats)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render matplotlib figure into an image and add it to summary."""
        self._writer.add_figure(tag, figure, global_step, close, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Add text data to summary."""
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Add precision recall curve."""
        self._writer.add_pr_curve(tag, _to_numpy(labels), _to_numpy(predictions), global_step,
                                  num_thresholds, _to_numpy(weights), walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Add embedding projector data to summary."""
        self._writer.add_embedding(_to_numpy(mat), metadata, _to_numpy(label_img), global_step,
                                   tag, metadata_header)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Add a set of hyperparameters to be compared in TensorBoard, in a sub-run named
        ``run_name`` (default: the current time). ``hparam_domain_discrete`` is accepted for
        torch's signature but not written (tensorboardX does not support it)."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        metrics = {k: _to_scalar(v) for k, v in metric_dict.items()}
        self._writer.add_hparams(hparam_dict, metrics, name=run_name, global_step=global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Add the graph of ``model`` run on ``input_to_model`` (a tensor or a tuple of them) to
        the event file, for TensorBoard's graph tab. The graph is ``ember.jit``'s trace of the
        model: one node per ember op and layer, grouped by module scope, with the shapes the
        trace saw. ``verbose`` prints the traced graph. (torch's graph holds TorchScript ops;
        ember's holds ember's.)"""
        import ember
        from ...jit._trace import _as_tuple, record_graph
        from ._graph import graph_def
        args = _as_tuple(input_to_model)
        with ember.no_grad():
            rec, _ = record_graph(model, model.forward, args, strict=use_strict_trace)
        if verbose:
            print(rec.graph)
        event = tensorboardX.proto.event_pb2.Event(
            graph_def=graph_def(model, rec.graph).SerializeToString())
        self._writer._get_file_writer().add_event(event)

    def flush(self):
        """Flushes the event file to disk."""
        self._writer.flush()
        for writer in self._scalars_writers.values():
            writer.flush()

    def close(self):
        """Flush and close the event files."""
        self._writer.close()
        for writer in self._scalars_writers.values():
            writer.close()
        self._scalars_writers.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
