# One entry point for people and CI. `make run` and `make test` bootstrap .venv from
# requirements.lock whenever it is missing or older than the lock.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000
# The Chinese catalogue, compiled from its source (.mo files are build output, not kept).
PO := locale/zh_Hans/LC_MESSAGES/django.po
MO := locale/zh_Hans/LC_MESSAGES/django.mo
NOT_OURS := --ignore=.venv --ignore=var --ignore=tests --ignore=simulator --ignore=deploy \
	--ignore=docs --ignore=scripts

.PHONY: run test test-fast realspeed lint format bench lock lock-runtime image image-size migrate demo clean \
	messages

$(STAMP): requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes -r requirements.lock
	@touch $(STAMP)

$(MO): $(PO) $(STAMP)
	@scripts/install-gettext.sh || [ -z "$$CI" ]  # CI must have it; `make run` goes on in English
	@if command -v msgfmt >/dev/null; then $(PY) manage.py compilemessages -l zh_Hans $(NOT_OURS); fi

## Extract the strings marked for translation into $(PO) (then translate the new ones;
## tests/unit/i18n lists what is left).
messages: $(STAMP)
	$(PY) manage.py makemessages -l zh_Hans --no-obsolete $(NOT_OURS)

venv: $(STAMP)

## The whole loop on embedded defaults: web + worker (SQLite, filesystem broker),
## the fleet simulator, Prometheus and Alertmanager.
run: $(STAMP) $(MO)
	@scripts/install-monitoring.sh
	$(PY) manage.py runstack --port $(PORT)

## The one test command (README and .ci/run call it): the linters, then every test, in
## TEST_WORKERS pytest-xdist workers taking whole modules (--dist loadfile), the drill and
## branch suites first: their waits overlap the rest. TEST_WORKERS=0: one plain pytest
## process (for --pdb and such).
test: lint $(MO)
	$(PY) -m pytest -n $(or $(TEST_WORKERS),4) --dist loadfile $(PYTEST_ARGS)

## Unit tests only: no real services (integration), browser, stack, drill or branch suite.
test-fast: $(STAMP) $(MO)
	$(PY) -m pytest -n $(or $(TEST_WORKERS),3) --dist loadfile \
		-m "not integration and not e2e and not smoke and not drill and not branches" \
		$(PYTEST_ARGS)

## ruff (style), import-linter (the apps' one-way layers, [tool.importlinter]) and mypy
## (types, [tool.mypy]; strict for services and selectors). CI runs it through `make test`.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

## The eight scenarios one after another on one `make run` at real speed, each fixed
## with the triage API's recommended action; the guard must undo none of the fixes
## (tests/realspeed, about 30 min; not in `make test`). Last result: var/realspeed-last.json.
realspeed: $(STAMP) $(MO)
	REALSPEED=1 REALSPEED_RESULT=var/realspeed-last.json $(PY) -m pytest \
		-m realspeed -s -v tests/realspeed $(PYTEST_ARGS)

## Benchmarks (not tests): print figures as ratios against an in-run baseline.
bench: $(STAMP)
	$(PY) tests/bench/run_all.py

## Recompile the lock file from pyproject.toml (needs network access to PyPI).
lock:
	$(PYTHON) -m pip install -q uv
	$(PYTHON) -m uv pip compile pyproject.toml --extra dev --python-version 3.11 \
		--generate-hashes -o requirements.lock

## The image's lock: pyproject's runtime dependencies only (no dev extra), same resolver.
lock-runtime:
	$(PYTHON) -m pip install -q uv
	$(PYTHON) -m uv pip compile pyproject.toml --python-version 3.11 \
		--generate-hashes -o requirements-runtime.lock

IMAGE ?= llm-incident-console:dev

## Build the image (needs a container daemon; CI builds it when `docker info` works).
image:
	docker build -t $(IMAGE) .

## The built image's size, and proof that it carries no test or lint tool.
image-size:
	@docker image inspect $(IMAGE) --format '{{.Size}}' \
		| awk '{ printf "$(IMAGE): %.0f MB\n", $$1 / 1000000 }'
	@! docker run --rm --entrypoint pip $(IMAGE) list 2>/dev/null \
		| grep -iE '^(pytest|ruff|mypy|hypothesis|playwright|schemathesis|factory.boy) ' \
		|| { echo "dev packages found in $(IMAGE)"; exit 1; }

clean:
	rm -rf $(VENV) var .pytest_cache
