#!/usr/bin/env bash
# Regenerate the frozen evaluation-log fixtures in tests/data/logs/{inspect,lm_eval,helm}/
# by running the real tools offline. The test suite never runs this script: it only reads
# the files that it leaves behind.
#
# Usage:  bash tests/data/logs/make_logs.sh
#
# Needs python3.11 (override with PYTHON=...) and access to PyPI. Each tool is installed in
# its own throwaway virtualenv under VENV_ROOT (default: a new temporary directory; pass an
# existing one to reuse its venvs). The runs happen in a temporary working directory, so no
# path of the repository ends up in the logs. Nothing is downloaded at run time: Inspect
# uses mockllm/model, lm-eval its dummy model on local JSON data, HELM the simple1 scenario
# with simple/model1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3.11}"
VENV_ROOT="${VENV_ROOT:-$(mktemp -d)}"
WORK="$(mktemp -d)"

INSPECT_VERSION="0.3.285"
LM_EVAL_VERSION="0.4.13"
HELM_VERSION="0.5.16"

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false

make_venv() {
    # make_venv DIR REQUIREMENT... : create DIR if needed, then pip install the requirements.
    local dir="$1"
    shift
    if [ ! -x "$dir/bin/python" ]; then
        "$PYTHON" -m venv "$dir"
    fi
    "$dir/bin/pip" install --quiet "$@"
}

echo "== Inspect $INSPECT_VERSION"
make_venv "$VENV_ROOT/inspect" "inspect-ai==$INSPECT_VERSION"
mkdir -p "$WORK/inspect"
cp "$HERE/inspect_task.py" "$HERE/inspect_dataset.jsonl" "$HERE/make_inspect_logs.py" \
    "$WORK/inspect/"
(cd "$WORK/inspect" && "$VENV_ROOT/inspect/bin/python" make_inspect_logs.py logs)
rm -rf "$HERE/inspect"
mkdir -p "$HERE/inspect"
cp "$WORK"/inspect/logs/*.eval "$WORK"/inspect/logs/*.json "$HERE/inspect/"

echo "== lm-evaluation-harness $LM_EVAL_VERSION"
# torch first: the CPU wheel of this version is available locally, while a bare `torch`
# requirement pulled in by lm-eval would fetch a multi-GB CUDA build.
make_venv "$VENV_ROOT/lm_eval" "torch==2.13.0"
make_venv "$VENV_ROOT/lm_eval" "lm-eval==$LM_EVAL_VERSION"
cp -r "$HERE/lm_eval_tasks" "$WORK/lm_eval"
(
    cd "$WORK/lm_eval"
    # "dummy-a" answers both tasks; "dummy-b" (another seed) only the multiple-choice one.
    # The dummy model ignores pretrained=..., which only names the run in the results file.
    "$VENV_ROOT/lm_eval/bin/lm_eval" --model dummy --model_args pretrained=dummy-a --seed 0 \
        --tasks slicewise_gen,slicewise_mc --include_path . --log_samples --output_path out
    "$VENV_ROOT/lm_eval/bin/lm_eval" --model dummy --model_args pretrained=dummy-b --seed 7 \
        --tasks slicewise_mc --include_path . --log_samples --output_path out
)
rm -rf "$HERE/lm_eval"
cp -r "$WORK/lm_eval/out" "$HERE/lm_eval"

echo "== HELM (crfm-helm) $HELM_VERSION"
# crfm-helm requires torchvision; this pair is available locally (see the machine notes).
make_venv "$VENV_ROOT/helm" "torch==2.14.1" "torchvision==0.29.1"
make_venv "$VENV_ROOT/helm" "crfm-helm==$HELM_VERSION"
mkdir -p "$WORK/helm"
(
    cd "$WORK/helm"
    # Two train trials, no perturbation.
    "$VENV_ROOT/helm/bin/helm-run" --run-entries "simple1:model=simple/model1" \
        --suite slicewise --max-eval-instances 10 --num-train-trials 2
    # One train trial; every instance also appears perturbed (extra spaces).
    "$VENV_ROOT/helm/bin/helm-run" \
        --run-entries "simple1:model=simple/model1,data_augmentation=extra_space" \
        --suite slicewise --max-eval-instances 10 --num-train-trials 1
)
rm -rf "$HERE/helm"
mkdir -p "$HERE/helm"
cp -r "$WORK"/helm/benchmark_output/runs/slicewise/simple1* "$HERE/helm/"

rm -rf "$WORK"
echo "== done: fixtures written under $HERE"
