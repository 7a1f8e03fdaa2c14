"""The engine of quantized operators, as ``torch.backends.quantized``: ``engine`` and
``supported_engines`` read and check as in torch's x86 CPU build. ember has no quantized
tensors or operators, so the engine chooses nothing."""
import sys
import types

__all__ = ["QuantizedEngine", "engine", "supported_engines"]

_ENGINE_IDS = {"none": 0, "": 0, None: 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
_ENGINE_NAMES = {0: "none", 1: "fbgemm", 2: "qnnpack", 3: "onednn", 4: "x86"}
_CPP_NAMES = {0: "NoQEngine", 1: "FBGEMM", 2: "QNNPACK", 3: "ONEDNN", 4: "X86"}
_SUPPORTED = (2, 3, 4, 1)
_state = {"engine": 4}


def _get_qengine_id(qengine):
    try:
        return _ENGINE_IDS[qengine]
    except (KeyError, TypeError):
        raise RuntimeError(f"{qengine} is not a valid value for quantized engine") from None


def _get_qengine_str(qengine):
    return _ENGINE_NAMES.get(qengine, "*undefined")


class _QEngineProp:
    def __get__(self, obj, objtype):
        return _get_qengine_str(_state["engine"])

    def __set__(self, obj, val):
        qengine = _get_qengine_id(val)
        if qengine not in _SUPPORTED:
            raise RuntimeError(f"quantized engine {_CPP_NAMES[qengine]} is not supported")
        _state["engine"] = qengine


class _SupportedQEnginesProp:
    def __get__(self, obj, objtype):
        return [_get_qengine_str(qe) for qe in _SUPPORTED]

    def __set__(self, obj, val):
        raise RuntimeError("Assignment not supported")


class QuantizedEngine(types.ModuleType):
    def __init__(self, m, name):
        super().__init__(name)
        self.m = m

    def __getattr__(self, attr):
        return self.m.__getattribute__(attr)

    engine = _QEngineProp()
    supported_engines = _SupportedQEnginesProp()


sys.modules[__name__] = QuantizedEngine(sys.modules[__name__], __name__)
