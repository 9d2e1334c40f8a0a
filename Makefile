# The two commands a fresh Debian machine needs (as root, or with sudo):
#   make demo   installs what is missing, builds, and makes a procedural badge
#   make test   installs what is missing and runs every test
SWIFT ?= swift
BADGE := .build/release/badge

.PHONY: deps build demo test bench fuzz man gallery clean

deps:
	@scripts/install-deps.sh

# A static Swift runtime: start-up falls from ~35 to ~25 ms (fewer symbols to bind).
build: deps
	$(SWIFT) build -c release --product badge --static-swift-stdlib

demo: build
	$(BADGE) generate --backend procedural "A pair of dumbbells"
	@echo
	$(BADGE) show

test:
	@scripts/install-deps.sh --with-tests
	@python3 -c "import openapi_schema_validator" 2>/dev/null || python3 -m pip install -q openapi-schema-validator \
	  || python3 -m pip install -q --break-system-packages openapi-schema-validator
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: build
	@scripts/install-deps.sh --with-bench
	$(SWIFT) build -c release --product BadgeBench
	@/usr/bin/python3 scripts/bench.py

# libFuzzer + ASan over the image header reader, for FUZZ_SECONDS (new inputs
# go to a scratch directory; a crash fails the target and names its input).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

gallery: build
	scripts/gallery.sh

man: deps
	$(SWIFT) package --allow-writing-to-package-directory generate-manual
	cp .build/plugins/GenerateManual/outputs/BadgeCLI/badge.1 badge.1
	@echo "man page: ./badge.1 (man -l badge.1; install to /usr/local/share/man/man1/)"

clean:
	rm -rf .build out
