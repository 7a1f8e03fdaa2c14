"""The ops ONNX (opset 17) cannot express, each with the reason the export error gives; none of
them has a converter in ``torch.onnx.export`` at opset 17 either."""
from ._builder import Unsupported
from ._functions import CONVERTERS

__all__ = ["NOT_EXPRESSIBLE"]

SPECIAL_FUNCTION = ("ONNX has no operator for this special function, and the series and "
                    "rational approximations that compute it are not an exact composition of "
                    "ONNX operators")
LOG_NDTR = ("log(ndtr(x)) through Erf underflows to -inf for x below about -13 in float32; "
            "the asymptotic series that avoids it is an approximation, not an ONNX operator")
ERFCX = ("exp(x^2) erfc(x) through Exp and Erf overflows and cancels for large x; the "
         "continued fraction that avoids it is not an ONNX operator")
BITS = ("it reads and writes the bits of a floating-point number, and ONNX has no bitcast "
        "operator")
DECOMPOSITION = ("ONNX has no matrix inverse, linear solve or matrix decomposition operator "
                 "(LU, Cholesky, QR, SVD, eigendecomposition)")
MATRIX_EXP = ("the number of squarings of its scaling-and-squaring method depends on the "
              "matrix's norm, and a fixed-size ONNX graph of Padé terms is not exact for all "
              "inputs")

NOT_EXPRESSIBLE = {
    **dict.fromkeys(
        ["erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0e", "i1", "i1e",
         "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai", "ndtri", "zeta",
         "gammainc", "gammaincc", "igamma", "igammac", "igamma_", "igammac_", "multigammaln",
         "gammaln", "psi", "erfinv_", "lgamma_",
         "digamma_", "polygamma_", "mvlgamma_", "i0_", "_standard_gamma_grad",
         "_dirichlet_grad"], SPECIAL_FUNCTION),
    "log_ndtr": LOG_NDTR,
    "erfcx": ERFCX,
    "nextafter": BITS, "nextafter_": BITS, "frexp": BITS,
    **dict.fromkeys(
        ["inverse", "inv", "inv_ex", "solve", "solve_ex", "cholesky", "linalg_cholesky",
         "cholesky_ex", "qr", "linalg_qr_fn", "svd", "linalg_svd_fn", "svdvals", "eigh",
         "eigvalsh", "eig", "eigvals", "pinv", "pinverse", "matrix_rank", "lstsq",
         "triangular_solve", "solve_triangular", "cholesky_solve", "cholesky_inverse", "lu",
         "lu_factor", "lu_factor_ex", "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve",
         "householder_product", "orgqr",
         "ormqr", "geqrf", "cond", "tensorinv", "tensorsolve"], DECOMPOSITION),
    "matrix_exp": MATRIX_EXP,
}


def _refuse(reason):
    def convert(ctx, node, a):
        from ._export import op_name
        raise Unsupported(f"operator '{op_name(node)}' ({reason})")
    return convert


for _name, _reason in NOT_EXPRESSIBLE.items():
    CONVERTERS[_name] = _refuse(_reason)
