"""``ember._dynamo.config``: the settings of ``ember.compile``'s capture, under torch's names.

``recompile_limit`` (torch's default, 8): how many graphs one compiled function captures; past
it, calls whose guards match no graph run eagerly. ``cache_size_limit`` is its older name, kept
as torch keeps it: setting either sets both."""
import sys
import types

recompile_limit = 8
# automatic dynamic shapes: a second distinct size of an input's dimension captures one graph
# for all sizes of that dimension (torch's ``automatic_dynamic_shapes``)
automatic_dynamic_shapes = True
# sizes 0 and 1 keep graphs of their own, as torch specializes them
specialize_sizes = (0, 1)
suppress_errors = False


class _Config(types.ModuleType):
    @property
    def cache_size_limit(self):
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


sys.modules[__name__].__class__ = _Config
