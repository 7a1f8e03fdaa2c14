"""Every differentiable op, grouped by family. Importing this package attaches the ops to
``Tensor`` as methods.

  pointwise  arithmetic with broadcasting and promotion (add, mul, div, pow, ...)
  unary      unary math, one table line each (exp, tanh, erf, ...)
  ternary    where, clamp, lerp, addcmul, addcdiv
  compare    comparisons, logical and bitwise ops
  reduce     sum, mean, max/min, var/std, norm, logsumexp, cumsum, ...
  view       views sharing storage: view, reshape, permute, slicing, split, ...
  shape      cat, stack, flip, roll, repeat, tile, tril, triu, ...
  subscript  x[key], x[key] = value, fill_, zero_, copy_
  index      gather, scatter, index_*, masked_*, index_put, nonzero
  linalg     matmul family, einsum, tensordot
  matrix_decompositions
             inv, det, solve, cholesky, qr, svd, eigh, ... with gradients
  random     Generator and samplers
  creation   tensor, zeros, arange, linspace, eye, ...
  convert    clone, contiguous, to, type conversions
  statistics isin, cov, corrcoef, histogram, histogramdd
  calculus   trapezoid, cumulative_trapezoid, gradient
  matrix_functions
             matrix_exp, addr, adjoint, vander, renorm
  triangular triangular_solve, cholesky_solve, cholesky_inverse, lu_unpack
  resize     resize_, resize_as_, set_ (in-place size and storage changes)
  complex    real, imag, view_as_real, view_as_complex, conj, angle, polar, complex
  lu         LU factorization (blocked getrf), lu_solve, solve_ex
  lu_deprecated
             the deprecated top-level lu, lu_solve
  householder
             householder_product (orgqr)
  distribution_samplers
             gamma, Dirichlet and binomial samplers with reparameterised gradients
"""
from . import (  # noqa: F401 (the order is the order of attaching Tensor methods)
    compare, convert, creation, matrix_decompositions, subscript, index, linalg, pointwise,
    random, reduce, shape, sort, ternary, unary, view,
    statistics, calculus, matrix_functions, triangular, resize, complex, lu, lu_deprecated,
    householder, distribution_samplers,
)
from . import _compiled_methods

_compiled_methods.prepare()
