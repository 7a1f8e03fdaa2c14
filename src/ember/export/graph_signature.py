"""The graph signature of an ``ExportedProgram``: what each placeholder and each output of the
graph is, in torch.export's terms (parameters, buffers, constants, user inputs and outputs)."""
import dataclasses
import enum

__all__ = ["InputKind", "OutputKind", "TensorArgument", "ConstantArgument", "InputSpec",
           "OutputSpec", "ExportGraphSignature"]


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: object
    persistent: object = None


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: object


def _argument_name(arg):
    return arg.name if isinstance(arg, TensorArgument) else repr(arg.value)


@dataclasses.dataclass
class ExportGraphSignature:
    """The placeholders of the graph in order (``input_specs``) and its outputs
    (``output_specs``), each with its kind and, for parameters and buffers, the state_dict key
    it stands for (``target``)."""
    input_specs: list
    output_specs: list

    def _inputs(self, kind):
        return [s.target for s in self.input_specs if s.kind is kind]

    @property
    def parameters(self):
        return self._inputs(InputKind.PARAMETER)

    @property
    def buffers(self):
        return self._inputs(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return [s.target for s in self.input_specs
                if s.kind is InputKind.BUFFER and s.persistent is False]

    @property
    def lifted_tensor_constants(self):
        return self._inputs(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self):
        return [_argument_name(s.arg) for s in self.input_specs if s.kind is InputKind.USER_INPUT]

    @property
    def user_outputs(self):
        return [_argument_name(s.arg) for s in self.output_specs
                if s.kind is OutputKind.USER_OUTPUT]

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.BUFFER}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self.input_specs
                if s.kind is InputKind.CONSTANT_TENSOR}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind is OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self):
        return {}

    def __str__(self):
        lines = ["", "# inputs"]
        for s in self.input_specs:
            line = f"{_argument_name(s.arg)}: {s.kind.name}"
            if s.target is not None:
                line += f" target={s.target!r}"
            if s.persistent is not None:
                line += f" persistent={s.persistent}"
            lines.append(line)
        lines += ["", "# outputs"]
        for s in self.output_specs:
            line = f"{_argument_name(s.arg)}: {s.kind.name}"
            if s.target is not None:
                line += f" target={s.target!r}"
            lines.append(line)
        return "\n".join(lines) + "\n"
