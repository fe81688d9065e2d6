# Two entry points on a fresh machine with Python 3.11 and pip:
#   make demo   -- builds .venv, installs slicewise, runs `slicewise demo`
#   make test   -- builds .venv with the dev extras at the exact versions of requirements/lock.txt,
#                  runs ruff, mypy --strict and the whole test suite
# and two for the dependencies:
#   make test-latest -- the same checks in .venv-latest, with the newest versions pyproject.toml allows
#   make lock        -- regenerates requirements/lock.txt from pyproject.toml (newest versions allowed;
#                       run it after changing a dependency or an extra, and commit the lock)
# and one for the measured results (hours; not part of `make test`):
#   make results -- regenerates every table in docs/results, each stamped with its command and commit
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LOCK := requirements/lock.txt
# the extras `make test` installs; `make lock` pins them and everything they pull in
EXTRAS := dev,plot,progress

.PHONY: demo test test-latest lock lint typecheck pytest browser-deps bench results results-smoke clean

$(BIN)/python:
	@echo "==> creating the virtualenv $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-base: pyproject.toml $(LOCK) | $(BIN)/python
	@echo "==> installing slicewise with numpy, scipy, pandas, scikit-learn, matplotlib at the versions of $(LOCK) (about a minute on a fresh machine)"
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[plot,progress]"
	touch $@

# The exact versions of the lock; the check after it fails when pyproject.toml asks for a package
# the lock does not pin (then run `make lock`). `make test-latest` sets LATEST=1: newest versions.
$(VENV)/.installed-dev: pyproject.toml $(LOCK) | $(BIN)/python
ifeq ($(LATEST),1)
	@echo "==> installing slicewise with the dev extras at the newest versions allowed (a few minutes)"
	$(BIN)/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[$(EXTRAS)]"
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/^/    /'
else
	@echo "==> installing slicewise with the dev extras at the versions of $(LOCK) (a few minutes on a fresh machine)"
	$(BIN)/python -m pip install --quiet -r $(LOCK) -e ".[$(EXTRAS)]"
	@$(BIN)/python -m pip freeze --exclude-editable | sort > $(VENV)/.frozen
	@grep -v '^#' $(LOCK) | sort | diff - $(VENV)/.frozen \
	  || { echo "==> $(VENV) differs from $(LOCK) (lines marked > are not pinned): run make lock"; exit 1; }
endif
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

# The same checks against the newest releases, in a virtualenv of its own (rebuilt every time).
test-latest:
	rm -f .venv-latest/.installed-dev .venv-latest/.installed-base
	$(MAKE) test VENV=.venv-latest LATEST=1

# Resolve pyproject.toml afresh in a throwaway virtualenv and pin what it installed.
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet ".[$(EXTRAS)]"
	mkdir -p $(dir $(LOCK))
	{ echo "# Exact versions for \`make test\` (Python 3.11): the extras $(EXTRAS) of pyproject.toml and"; \
	  echo "# everything they pull in. Regenerate with \`make lock\` after changing a dependency; commit it."; \
	  .venv-lock/bin/python -m pip freeze --exclude slicewise; } > $(LOCK)
	rm -rf .venv-lock
	@echo "==> wrote $(LOCK): $$(grep -c '==' $(LOCK)) pinned packages"

bench: $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks.bench_core
	$(BIN)/python -m benchmarks.bench_memory
	$(BIN)/python -m benchmarks.bench_methods
	$(BIN)/python -m benchmarks.bench_study
	$(BIN)/python -m benchmarks.bench_domains

# Every table in docs/results, with the commands (and arguments) its Markdown file quotes. The real
# data are read from ../shared/data. Generators that write their own reports stamp them
# (research/stamp.py); the others run under `python -m research.stamp`, which stamps the tables
# they write (--tables) or saves their printed tables, stamped, under docs/results/generated/
# (--log), to be compared with or pasted into the hand-written commentary.
# Hours of CPU on two cores; the sensitivity studies read the main studies from RESULTS_CACHE.
RESULTS_CACHE ?= /tmp/sw_results_cache
MCMC_PYTHON ?= /tmp/mcmc-venv/bin/python
STAMP := python -m research.stamp
GEN := docs/results/generated
SENS_CELLS := psn_irt:difficulty,alpaca_eval:length,llmbar:length,unieval:length,wmt_mqm_ted:length
AUTO_METHODS := naive,lace,lace_oracle,global_cv,lace_shrunk,lace_learned,auto

results: export PATH := $(abspath $(BIN)):$(PATH)
results: $(VENV)/.installed-dev
	@echo "==> matched-split studies on the real data (study_<dataset>.md, <dataset>/)"
	python -m scripts.study_real --dataset psn_irt --reps 50 --jobs 2 --out docs/results/psn_irt/ --cache $(RESULTS_CACHE)
	for d in alpaca_eval llmbar pandalm unieval wmt_mqm_ted; do \
	  python -m scripts.study_real --dataset $$d --reps 100 --jobs 2 --out docs/results/$$d/ --cache $(RESULTS_CACHE) || exit 1; \
	done
	@echo "==> sensitivity studies (sensitivity.md, sensitivity/)"
	rm -rf $(RESULTS_CACHE)/sensitivity
	python -m scripts.sensitivity_real --stress $(SENS_CELLS) --sparse $(SENS_CELLS) --cv llmbar:subset,llmbar:length,pandalm:pair --cv-reps 30 --reps 40 --jobs 2 --cache $(RESULTS_CACHE) --out docs/results/sensitivity/
	@echo "==> the paper's simulations (auto.md, auto/)"
	$(STAMP) --tables docs/results/auto/setting-b -- slicewise simulate setting-b --methods $(AUTO_METHODS) --reps 300 --seed 0 --out docs/results/auto/setting-b
	$(STAMP) --tables docs/results/auto/setting-c -- slicewise simulate setting-c --methods $(AUTO_METHODS) --reps 300 --seed 0 --out docs/results/auto/setting-c
	$(STAMP) --tables docs/results/auto/specialist -- slicewise simulate specialist --methods naive,lace,lace_oracle,global_cv,plugin_multi,auto --budgets 500,2000 --reps 200 --seed 0 --out docs/results/auto/specialist
	$(STAMP) --log $(GEN)/setting_c_methods.md -- python -m pytest tests/methods/test_baselines.py -k setting_c -s -q
	@echo "==> design-based domains (domains_*.md)"
	$(STAMP) --log $(GEN)/domains_psn_irt_single.md -- python -m scripts.domains_psn_irt --setting single --candidate model_0 --reps 100 --per-domain
	$(STAMP) --log $(GEN)/domains_psn_irt_crossed.md -- python -m scripts.domains_psn_irt --setting crossed --reps 100
	$(STAMP) --log $(GEN)/domains_lmarena_0.4.md -- python -m scripts.domains_lmarena --fraction 0.4 --trials 200
	$(STAMP) --log $(GEN)/domains_lmarena_0.1.md -- python -m scripts.domains_lmarena --fraction 0.1 --trials 200
	$(STAMP) --log $(GEN)/domains_lmarena_0.1_dbcv.md -- python -m scripts.domains_lmarena --fraction 0.1 --trials 40 --dbcv
	@echo "==> planning: sw.plan's predicted half-width against the realized one (generated/plan_accuracy.md)"
	$(STAMP) --log $(GEN)/plan_accuracy.md -- python -m research.plan_accuracy --reps 60
	@echo "==> per-slice validity of the defaults (per_slice/, per_slice_domains/, generated/floor_cost.md, df_cost.md, setting_b_coverage.md)"
	for d in alpaca_eval llmbar pandalm unieval wmt_mqm_ted psn_irt; do \
	  python -m research.per_slice --dataset $$d --reps 200 --jobs 2 --out docs/results/per_slice || exit 1; \
	done
	python -m research.per_slice_domains --dataset psn_irt --reps 200 --jobs 2 --out docs/results/per_slice_domains
	python -m research.per_slice_domains --dataset lmarena --reps 200 --jobs 2 --out docs/results/per_slice_domains
	python -m research.floor_cost --reps 10 --cells 2 --out $(GEN)/floor_cost.md
	python -m research.df_cost --reps 10 --cells 2 --datasets llmbar,pandalm,unieval,wmt_mqm_ted,alpaca_eval,psn_irt --out $(GEN)/df_cost.md
	$(STAMP) --log $(GEN)/setting_b_coverage.md -- python -m research.setting_b_coverage --reps 200 --study
	@echo "==> semantic profiles: topics against the shipped axis (topics/), their speed (generated/bench_topics.md)"
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m research.topics_study --reps 200 --budgets 100,200 --candidates 5 --out docs/results/topics
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(STAMP) --log $(GEN)/bench_topics.md -- python -m benchmarks.bench_topics --rows 100000,1000000
	@echo "==> adaptive against uniform labeling (generated/adaptive_*.md)"
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(STAMP) --log $(GEN)/adaptive_sims.md -- python -m benchmarks.bench_adaptive --reps 30 --method auto --only split-judge,setting-b,setting-c,specialist-i3 --multipliers 1,1.5,2
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(STAMP) --log $(GEN)/adaptive_real.md -- python -m benchmarks.bench_adaptive --reps 30 --method auto --only alpacaeval,psn-irt,unieval,llmbar --multipliers 1,1.5,2
	@echo "==> many models: gaps and deployment scores (models_gaps_deploy.md)"
	$(STAMP) --log $(GEN)/models_gaps_deploy_2000.md -- python scripts/models_realdata.py --draws 200 --n 2000
	$(STAMP) --log $(GEN)/models_gaps_deploy_8000.md -- python scripts/models_realdata.py --draws 100 --n 8000
	@echo "==> benchmarks (bench_*.md; the MCMC comparison needs PyMC at MCMC_PYTHON)"
	python -m benchmarks.bench_core --repeat 10 --runs 3 --out docs/results/bench_core.md
	$(STAMP) --log $(GEN)/bench_memory.md -- python -m benchmarks.bench_memory
	$(STAMP) --log $(GEN)/bench_methods.md -- python -m benchmarks.bench_methods --repeats 7
	$(STAMP) --log $(GEN)/bench_study_engine.md -- python -m benchmarks.bench_study --jobs 2 --repeat 3 --skip-all
	$(STAMP) --log $(GEN)/bench_study_all.md -- python -m benchmarks.bench_study --jobs 2 --repeat 1
	$(STAMP) --log $(GEN)/bench_study_pool.md -- python -m benchmarks.bench_study --jobs 2 --repeat 2 --skip-all --pool 20000 --cells 4 --reps 20
	$(STAMP) --log $(GEN)/bench_study_per_method.md -- python -m benchmarks.bench_study --jobs 2 --repeat 1 --skip-all --per-method --cells 2 --reps 2
	$(STAMP) --log $(GEN)/bench_domains.md -- python -m benchmarks.bench_domains --mcmc-python $(MCMC_PYTHON)
	$(STAMP) --log $(GEN)/bench_pool_sources.md -- python -m benchmarks.bench_pool_sources --rows 1e7
	$(STAMP) --log $(GEN)/bench_pool_sources_duckdb.md -- python -m benchmarks.bench_pool_sources --rows 1e7 --engines floor,duckdb

# Seconds: one small piece of `make results` (a short simulation, stamped) into /tmp, to check the stamps.
results-smoke: export PATH := $(abspath $(BIN)):$(PATH)
results-smoke: $(VENV)/.installed-dev
	$(STAMP) --tables /tmp/sw_results_smoke -- slicewise simulate setting-b --methods naive,lace --budgets 500 --reps 3 --seed 0 --no-progress --out /tmp/sw_results_smoke

clean:
	rm -rf .venv .venv-latest .venv-lock demo-output .pytest_cache .mypy_cache .ruff_cache
