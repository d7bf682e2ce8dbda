# Two entry points a newcomer needs: `make demo` and `make test`. Both set up .venv first.
VENV ?= .venv
MODELS ?= smollm2-135m qwen2.5-coder-1.5b
EXTRAS ?= embedded,server,embeddings,ray,annotate,dev
STAMP := $(VENV)/.judgelab-installed

.PHONY: setup demo test bench lint

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh $(VENV) $(EXTRAS) $(MODELS)
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/judgelab demo

test: setup
	$(VENV)/bin/python -m pytest

bench: setup
	$(VENV)/bin/python -m bench.run_all $(BENCH)

lint: setup
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
