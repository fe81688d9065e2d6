"""Run ``inspect_task.py`` on ``mockllm/model`` and write one ``.eval`` and one ``.json`` log.

Usage: ``python make_inspect_logs.py OUT_DIR`` (called by ``make_logs.sh``).

``mockllm/model`` normally counts input tokens with tiktoken, which downloads its encoding
file on first use; this machine has no internet, so the mock model is given outputs that
already carry a token usage. The reply text is mockllm's own default reply, unchanged.
"""

import sys
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_task import slicewise_fixture


def _reply(*_args: Any) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm", content=MockLLM.default_output)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def main(out_dir: str) -> None:
    model = get_model("mockllm/model", custom_outputs=_reply)
    # Two epochs in the zipped .eval format, one epoch in the plain .json format.
    for log_format, epochs in (("eval", 2), ("json", 1)):
        inspect_eval(
            slicewise_fixture(),
            model=model,
            epochs=epochs,
            log_format=log_format,
            log_dir=out_dir,
            display="none",
        )


if __name__ == "__main__":
    main(sys.argv[1])
