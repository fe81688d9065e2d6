# Two entry points on a fresh machine with Python 3.11 and pip:
#   make demo   -- builds .venv, installs slicewise, runs `slicewise demo`
#   make test   -- builds .venv with the dev extras, runs ruff, mypy --strict and the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck pytest browser-deps bench clean

$(BIN)/python:
	@echo "==> creating the virtualenv $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	@echo "==> installing slicewise with numpy, scipy, pandas, scikit-learn, matplotlib (about a minute on a fresh machine)"
	$(BIN)/python -m pip install --quiet -e ".[plot,progress]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	@echo "==> installing slicewise with the dev extras (pytest, ruff, mypy, statsmodels, selenium; a few minutes on a fresh machine)"
	$(BIN)/python -m pip install --quiet -e ".[dev,plot,progress]"
	touch $@ $(VENV)/.installed-base

demo: $(VENV)/.installed-base
	@echo "==> running slicewise demo: AlpacaEval 2, outputs in demo-output/"
	$(BIN)/slicewise demo --out demo-output

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks scripts research
	$(BIN)/ruff format --check src tests benchmarks scripts research

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The HTML report tests drive headless Chromium (Debian packages chromium, chromium-driver).
browser-deps:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  echo "==> installing Chromium and chromedriver for the HTML report tests (apt-get)"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  ($$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    chromium chromium-driver >/dev/null) \
	  || echo "==> could not install chromium; the browser tests will fail and say why"; \
	fi

pytest: $(VENV)/.installed-dev browser-deps
	# two workers on two cores; one BLAS thread each (many small products, threads only contend)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --durations=15

test: lint typecheck pytest

bench: $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks.bench_core
	$(BIN)/python -m benchmarks.bench_methods
	$(BIN)/python -m benchmarks.bench_study
	$(BIN)/python -m benchmarks.bench_domains

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
