"""The serial branches beside OpenMP parallel regions (``ember._inductor._serial_regions``): plain tests, since
torch defines nothing here; the loops they change are checked against torch by the op tests."""
import ctypes

import numpy as np
import pytest

from ember._inductor import _compiler
from ember._inductor._serial_regions import with_serial_branches

LOOP = """void twice(const double *x, double *out, long n, int nthreads) {
    #pragma omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1 && n >= 64) schedule(static)
    for (long i = 0; i < n; i++) out[i] = 2 * x[i];
}
"""


def test_a_region_with_an_if_clause_gets_a_serial_branch():
    rewritten = with_serial_branches(LOOP)
    assert rewritten == """void twice(const double *x, double *out, long n, int nthreads) {
    if (nthreads > 1 && n >= 64) {
    #pragma omp parallel for simd num_threads(nthreads) schedule(static)
    for (long i = 0; i < n; i++) out[i] = 2 * x[i];
    } else {
    #pragma omp simd
    for (long i = 0; i < n; i++) out[i] = 2 * x[i];
    }
}
"""


def test_blocks_nested_loops_comments_literals_and_else_are_followed():
    source = """void f(int *a, int n, int t) {
    #pragma omp parallel for num_threads(t) if(t > 1) schedule(dynamic, 4)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            /* a } in a comment */
            if (a[i] > j) a[i] = '}';
            else { a[i] = (j + 1) * 2; }
        }
    #pragma omp parallel num_threads(t) if(t > 2)
    {
        int k = 0;   // a { in a line comment
        a[k] += 1;
    }
}
"""
    rewritten = with_serial_branches(source)
    assert rewritten.count("} else {\n") == 2
    assert "if (t > 1) {\n    #pragma omp parallel for num_threads(t) schedule(dynamic, 4)\n" in rewritten
    assert "if (t > 2) {\n    #pragma omp parallel num_threads(t)\n" in rewritten
    serial = rewritten.split("} else {\n", 1)[1].split("\n    }\n", 1)[0]
    assert serial.startswith("    for (int i = 0; i < n; i++)") and "#pragma" not in serial


@pytest.mark.parametrize("pragma", [
    "#pragma omp parallel for reduction(+:total) num_threads(t) if(t > 1)",
    "#pragma omp parallel for private(k) num_threads(t) if(t > 1)",
    "#pragma omp parallel for num_threads(t)",
])
def test_regions_without_an_if_or_with_private_variables_are_left_alone(pragma):
    source = f"void f(double *a, int n, int t) {{\n    double total = 0; int k;\n    {pragma}\n" \
             "    for (int i = 0; i < n; i++) total += a[i];\n}\n"
    assert with_serial_branches(source) == source


def test_a_statement_it_does_not_follow_is_left_alone():
    source = "void f(int *a, int t) {\n    #pragma omp parallel if(t > 1)\n    a[0] = (int[]){1, 2}[1];\n}\n"
    assert with_serial_branches(source) == source


def _assert_both_branches_scale(source, name, factor):
    """The loop ``name`` of ``source`` scales its input by ``factor`` on one thread and two, small and large."""
    fn = _compiler.load(source, name, quiet=True,
                        argtypes=(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int))
    assert fn is not None
    for n, threads in ((5, 1), (5, 2), (100, 1), (100, 2)):
        x = np.linspace(-1, 1, n)
        out = np.zeros(n)
        fn(x.ctypes.data, out.ctypes.data, n, threads)
        np.testing.assert_array_equal(out, factor * x)


@pytest.mark.skipif(not _compiler.compiler_available(), reason="no C compiler here")
def test_both_branches_compute_the_loop():
    _assert_both_branches_scale(LOOP, "twice", 2)


MACRO_LOOP = """#define SCALED(name, FACTOR) \\
void name(const double *x, double *out, long n, int nthreads) { \\
    _Pragma("omp parallel num_threads(nthreads) if(nthreads > 1 && n >= 64)") \\
    { \\
        _Pragma("omp for schedule(static)") \\
        for (long i = 0; i < n; i++) out[i] = FACTOR * x[i]; \\
    } \\
    _Pragma("omp parallel for simd num_threads(nthreads) if(parallel: nthreads > 1) reduction(+:n)") \\
    for (long i = 0; i < 1; i++) n += 0; \\
}
SCALED(thrice, 3)
"""


def test_a_macros_region_gets_a_serial_branch_on_its_lines():
    rewritten = with_serial_branches(MACRO_LOOP)
    body = rewritten.split("\n}\n")[0].split("\n")
    assert all(line.endswith(" \\") for line in body)   # (still one macro)
    assert ('    if (nthreads > 1 && n >= 64) { _Pragma("omp parallel num_threads(nthreads)") { \\\n'
            '        _Pragma("omp for schedule(static)") \\\n') in rewritten
    assert '    } } else { { \\\n        _Pragma("omp for schedule(static)") \\\n' in rewritten
    assert rewritten.count("else") == 1   # (the region reducing into n left alone)


@pytest.mark.skipif(not _compiler.compiler_available(), reason="no C compiler here")
def test_both_branches_of_a_macros_region_compute_the_loop():
    _assert_both_branches_scale(MACRO_LOOP, "thrice", 3)
