# The two commands a fresh Debian machine needs (as root, or with sudo):
#   make demo   installs what is missing, builds, and makes a procedural badge
#   make test   installs what is missing and runs every test
SWIFT ?= swift
BADGE := .build/release/badge

.PHONY: deps build demo test bench man clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build -c release --product badge

demo: build
	$(BADGE) generate --backend procedural "A pair of dumbbells"
	@echo
	$(BADGE) show

test: deps
	@python3 -c "import openapi_schema_validator" 2>/dev/null || python3 -m pip install -q openapi-schema-validator
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: build
	@scripts/install-deps.sh --with-bench
	@/usr/bin/python3 scripts/bench.py

man: deps
	$(SWIFT) package --allow-writing-to-package-directory generate-manual --multi-page=false
	@ls -1 .build/plugins/GenerateManual/outputs/*/* 2>/dev/null || true

clean:
	rm -rf .build out
