"""Control of the operation overrides that torch's Python-native DSLs (Triton, CuTe DSL)
register, as ``torch.backends.python_native``. ember has neither DSL's kernels: both are
known by name, neither is available, and none registers an operation, so the switches only
record which operations, dispatch keys and DSLs are disabled."""
import contextlib
import sys

from .. import PropModule, flags_frozen

__all__ = ["DSLController", "PythonNativeModule"]

_ALL_DSLS = ("cutedsl", "triton")
_disabled = {"dsls": set(), "ops": set(), "keys": set()}


def _check_dsl(name):
    if name not in _ALL_DSLS:
        raise ValueError(f"Unknown DSL: {name}. Available DSLs: {list(_ALL_DSLS)}")


class DSLController:
    """Controller for a specific DSL."""

    def __init__(self, dsl_name):
        self._dsl_name = dsl_name

    @property
    def name(self):
        return self._dsl_name

    @property
    def available(self):
        """Check if DSL runtime is available (never, in ember)."""
        return False

    @property
    def version(self):
        """Get DSL version (None: not installed for ember)."""
        return None

    @property
    def enabled(self):
        """Check if DSL is currently enabled."""
        return self._dsl_name not in _disabled["dsls"]

    @enabled.setter
    def enabled(self, value):
        if flags_frozen():
            raise RuntimeError(f"not allowed to set {self._dsl_name} DSL flags after "
                               "disable_global_flags; please use flags() context manager instead")
        if value:
            self.enable()
        else:
            self.disable()

    def disable(self):
        """Disable all operations for this DSL."""
        _check_dsl(self._dsl_name)
        _disabled["dsls"].add(self._dsl_name)

    def enable(self):
        """Re-enable all operations for this DSL."""
        _disabled["dsls"].discard(self._dsl_name)

    @contextlib.contextmanager
    def disabled(self):
        """Context manager to temporarily disable DSL."""
        original_state = self.enabled
        try:
            self.disable()
            yield
        finally:
            if original_state:
                self.enable()

    def __repr__(self):
        status = "available" if self.available else "unavailable"
        enabled_status = "enabled" if self.enabled else "disabled"
        return f"DSLController({self._dsl_name}, {status}, {enabled_status})"


class PythonNativeModule(PropModule):
    """Main module for python_native DSL control."""

    def __init__(self, original_module):
        super().__init__(original_module, original_module.__name__)
        self._controllers = {}

    @property
    def available_dsls(self):
        """Get list of available DSLs (none, in ember)."""
        return []

    @property
    def all_dsls(self):
        """Get list of all registered DSLs."""
        return list(_ALL_DSLS)

    def get_dsl_operations(self, dsl_name):
        """Get list of operations registered by a specific DSL (none, in ember)."""
        return []

    def disable_operations(self, *op_symbols):
        """Disable specific operations across all DSLs."""
        _disabled["ops"].update(op_symbols)

    def enable_operations(self, *op_symbols):
        """Re-enable specific operations across all DSLs."""
        _disabled["ops"].difference_update(op_symbols)

    def disable_dispatch_keys(self, *dispatch_keys):
        """Disable operations at specific dispatch keys (e.g. 'CUDA', 'CPU')."""
        _disabled["keys"].update(dispatch_keys)

    def enable_dispatch_keys(self, *dispatch_keys):
        """Re-enable operations at specific dispatch keys."""
        _disabled["keys"].difference_update(dispatch_keys)

    @contextlib.contextmanager
    def operations_disabled(self, *op_symbols):
        """Context manager to temporarily disable operations."""
        previously_disabled = {op for op in op_symbols if op in _disabled["ops"]}
        self.disable_operations(*op_symbols)
        try:
            yield
        finally:
            self.enable_operations(*[op for op in op_symbols if op not in previously_disabled])

    def is_operation_disabled(self, op_symbol):
        """Check if an operation is currently disabled."""
        return op_symbol in _disabled["ops"]

    def is_dsl_disabled(self, dsl_name):
        """Check if a DSL is currently disabled."""
        return dsl_name in _disabled["dsls"]

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        if name in _ALL_DSLS:
            controllers = self.__dict__["_controllers"]
            if name not in controllers:
                controllers[name] = DSLController(name)
            return controllers[name]
        try:
            return self.m.__getattribute__(name)
        except AttributeError:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_ALL_DSLS) | {
            "available_dsls", "all_dsls", "get_dsl_operations", "disable_operations",
            "enable_operations", "disable_dispatch_keys", "enable_dispatch_keys",
            "operations_disabled", "is_operation_disabled", "is_dsl_disabled"})


sys.modules[__name__] = PythonNativeModule(sys.modules[__name__])
