"""``save`` and ``load`` of an ``ExportedProgram`` in ember's export format.

The file is a zip archive:

- ``ember_export/program.json``: ``{"format": "ember.export", "version": 1, "graph": [...],
  "input_specs": [...], "output_specs": [...], "input_names": [...], "n_args": int,
  "kwarg_names": [...], "out_spec": ..., "shape_guards": {...}, "training": bool,
  "parameters": [...]}``. The graph is written as ``ember.jit.save`` writes one (a node list
  with ``$``-tagged values; functions by qualified name).
- ``ember_export/tensors.pt``: an ``ember.save`` archive of a dict holding ``state/<key>``
  (parameters and persistent buffers), ``constants/<key>`` and ``example/<i>`` /
  ``example/<kwarg name>`` (the example inputs).
- ``ember_export/extra/<name>``: ``extra_files``.

Loading reads only JSON and a weights-only tensor archive, and resolves functions only inside
ember (and ``operator``, ``math``, ``builtins``): no code from the file runs. This is not
torch.export's ``.pt2`` format: torch cannot read it, nor ember torch's.
"""
import io
import os

from ..fx.graph_module import GraphModule
from ..jit._archive import _decode_graph, _encode_graph, read_archive, write_archive
from .dynamic_shapes import ShapeGuards
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                               OutputKind, OutputSpec, TensorArgument)
from .exported_program import ExportedProgram

__all__ = ["save", "load"]

FORMAT = "ember.export"
VERSION = 1
_PREFIX = "ember_export/"


def _encode_argument(arg):
    if isinstance(arg, TensorArgument):
        return {"tensor": arg.name}
    from ..jit._archive import _encode
    return {"constant": _encode(arg.value)}


def _decode_argument(spec):
    if "tensor" in spec:
        return TensorArgument(spec["tensor"])
    from ..jit._archive import _decode
    return ConstantArgument("", _decode(spec["constant"]))


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Save ``ep`` (an ``ExportedProgram``) to ``f``, a path or a binary file, in ember's export
    format (see the module's description); ``load`` reads it back."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    args, kwargs = ep.example_inputs
    tensors = {f"state/{k}": t.detach() for k, t in ep.state_dict.items()}
    tensors.update({f"constants/{k}": t.detach() for k, t in ep.constants.items()})
    tensors.update({f"example/{i}": a for i, a in enumerate(args)})
    tensors.update({f"example/{k}": v for k, v in kwargs.items()})
    header = {
        "format": FORMAT, "version": VERSION, "graph": _encode_graph(ep.graph),
        "input_specs": [{"kind": s.kind.name, "arg": _encode_argument(s.arg),
                         "target": s.target, "persistent": s.persistent}
                        for s in ep.graph_signature.input_specs],
        "output_specs": [{"kind": s.kind.name, "arg": _encode_argument(s.arg),
                          "target": s.target} for s in ep.graph_signature.output_specs],
        "input_names": ep._input_names, "n_args": len(args), "kwarg_names": list(kwargs),
        "out_spec": ep._out_spec, "shape_guards": ep.shape_guards.to_json(),
        "training": ep._training,
        "requires_grad": sorted(k for k, t in ep.state_dict.items() if t.requires_grad),
    }
    write_archive(f, _PREFIX, "program.json", header, tensors, extra_files)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Load an ``ExportedProgram`` saved by ``ember.export.save`` from ``f``, a path or a
    binary file; ``extra_files`` (a dict of names) is filled in with the stored contents."""
    import ember
    from ..nn import Parameter
    if not hasattr(f, "read") and not os.path.exists(os.fspath(f)):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{os.fspath(f)}'")
    stored_extra = None if extra_files is None else dict.fromkeys(extra_files)
    header, data = read_archive(
        f, _PREFIX, "program.json", "ember.export.load: not a file written by ember.export.save "
        "(torch.export's .pt2 files cannot be read)", stored_extra)
    if extra_files is not None:
        extra_files.update({name: content.decode() for name, content in stored_extra.items()})
    if header.get("format") != FORMAT or header.get("version", 0) > VERSION:
        raise RuntimeError(f"ember.export.load: unsupported format {header.get('format')!r} "
                           f"version {header.get('version')!r}")
    stored = ember.load(io.BytesIO(data), weights_only=True)
    input_specs = [InputSpec(InputKind[s["kind"]], _decode_argument(s["arg"]), s["target"],
                             s["persistent"]) for s in header["input_specs"]]
    output_specs = [OutputSpec(OutputKind[s["kind"]], _decode_argument(s["arg"]), s["target"])
                    for s in header["output_specs"]]
    parameters = {s.target for s in input_specs if s.kind is InputKind.PARAMETER}
    state_dict = {}
    for key, t in stored.items():
        if key.startswith("state/"):
            name = key[len("state/"):]
            state_dict[name] = Parameter(t, requires_grad=name in header["requires_grad"]) \
                if name in parameters else t
    constants = {k[len("constants/"):]: t for k, t in stored.items()
                 if k.startswith("constants/")}
    args = tuple(stored[f"example/{i}"] for i in range(header["n_args"]))
    kwargs = {k: stored[f"example/{k}"] for k in header["kwarg_names"]}
    gm = GraphModule({}, _decode_graph(header["graph"]), "GraphModule")
    return ExportedProgram(gm, ExportGraphSignature(input_specs, output_specs), state_dict,
                           constants, ShapeGuards.from_json(header["shape_guards"]),
                           (args, kwargs), header["input_names"], header["out_spec"],
                           header["training"])
