"""Adding rows into an array at repeated row indices: ``numpy.add.at(out, index, rows)`` for
an integer index along the first axis (the backward of an embedding lookup, of ``x[index]``
and ``index_add``), without ``add.at``'s cost per element.

The indices are sorted stably into runs of one index; the k-th rows of all runs are added at
once (a few fancy-indexed adds of distinct rows), in the order ``add.at`` adds them, or, when
some run is long, each run is summed by ``add.reduceat`` (NumPy's ``reduceat`` has a cost per
run, ``add.at`` a larger one per element)."""
from . import namespace_of

__all__ = ["add_rows_at", "MAX_RUN_BY_POSITION"]

# Longest run of one index added position by position; longer runs (a padding token repeated
# over a batch) go through ``add.reduceat``.
MAX_RUN_BY_POSITION = 16


def add_rows_at(out, index, rows):
    """``out[index[i]] += rows[i]`` for every i, repeated indices adding up: ``out`` (N, D),
    ``index`` (M,) of integers in [0, N), ``rows`` (M, D). Returns ``out``."""
    xp = namespace_of(out)
    if not index.size or not hasattr(xp.add, "reduceat"):
        xp.add.at(out, index, rows)
        return out
    order = xp.argsort(index, kind="stable")
    ordered = index[order]
    new_run = xp.empty(ordered.shape, dtype=bool)
    new_run[0] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=new_run[1:])
    starts = xp.flatnonzero(new_run)
    lengths = xp.diff(starts, append=ordered.size)
    targets = ordered[starts]
    if lengths.max() > MAX_RUN_BY_POSITION:
        out[targets] += xp.add.reduceat(rows[order], starts, axis=0)
        return out
    out[targets] += rows[order[starts]]
    position = 1
    longer = lengths > position
    while longer.any():
        out[targets[longer]] += rows[order[starts[longer] + position]]
        position += 1
        longer = lengths > position
    return out
