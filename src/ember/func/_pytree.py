"""Nested tuples, lists, dicts and named tuples of leaves: what the transforms take and return."""

__all__ = ["tree_flatten", "tree_unflatten", "broadcast_prefix", "tree_repr"]


def _children(obj):
    if type(obj) is tuple or type(obj) is list:
        return (type(obj), None), list(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj), "namedtuple"), list(obj)
    if type(obj) is dict:
        keys = list(obj)
        return (dict, keys), [obj[k] for k in keys]
    return None, None


def tree_flatten(obj):
    """``(leaves, spec)``: the leaves in order and what rebuilds the structure around them."""
    node, children = _children(obj)
    if node is None:
        return [obj], None
    leaves, specs = [], []
    for child in children:
        child_leaves, child_spec = tree_flatten(child)
        leaves.extend(child_leaves)
        specs.append((len(child_leaves), child_spec))
    return leaves, (node, specs)


def tree_unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    (kind, extra), specs = spec
    children, i = [], 0
    for n, child_spec in specs:
        children.append(tree_unflatten(leaves[i:i + n], child_spec))
        i += n
    if kind is dict:
        return dict(zip(extra, children))
    if extra == "namedtuple":
        return kind(*children)
    return kind(children)


def tree_repr(spec):
    if spec is None:
        return "*"
    (kind, extra), specs = spec
    inner = ", ".join(tree_repr(s) for _, s in specs)
    name = kind.__name__
    return f"TreeSpec({name}, {extra if kind is dict else None}, [{inner}])"


def broadcast_prefix(prefix, tree):
    """One entry of ``prefix`` per leaf of ``tree``, where ``prefix`` matches the top of
    ``tree``'s structure and each of its leaves covers a whole subtree; None if it does not."""
    prefix_node, prefix_children = _children(prefix)
    if prefix_node is None:
        return [prefix] * len(tree_flatten(tree)[0])
    node, children = _children(tree)
    if node is None or node[0] is not prefix_node[0] and not (
            issubclass(node[0], tuple) and issubclass(prefix_node[0], tuple)):
        return None
    if len(children) != len(prefix_children):
        return None
    if prefix_node[0] is dict and set(prefix_node[1]) != set(node[1]):
        return None
    if prefix_node[0] is dict:
        prefix_children = [prefix[k] for k in node[1]]
    out = []
    for p, c in zip(prefix_children, children):
        sub = broadcast_prefix(p, c)
        if sub is None:
            return None
        out.extend(sub)
    return out
