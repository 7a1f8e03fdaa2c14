"""The CPU's vector capability, as ``torch.backends.cpu``."""
__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """Return cpu capability as a string value: the widest vector instruction set this CPU has
    among those torch's CPU kernels are built for ("AVX512", "AVX2", else "DEFAULT"), as
    NumPy's runtime detection sees it."""
    from numpy._core._multiarray_umath import __cpu_features__ as has
    if all(has.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if has.get("AVX2") and has.get("FMA3"):
        return "AVX2"
    return "DEFAULT"
