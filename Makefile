# The two commands a fresh Debian machine needs (as root, or with sudo):
#   make demo   installs what is missing, builds, and makes a procedural badge
#   make test   installs what is missing and runs every test
SWIFT ?= swift
BADGE := .build/release/badge
# One source of truth for the version: BadgeMetadata.version, which `badge --version`
# prints, `badge:generator` records, and the .deb is named after.
VERSION := $(shell sed -n 's/^ *public static let version = "\([^"]*\)"$$/\1/p' Sources/BadgeKit/BadgeMetadata.swift)
PREFIX ?= /usr/local
DESTDIR ?=
STAGE := .build/stage

.PHONY: deps build demo test bench fuzz man gallery clean version stage install uninstall deb check-package

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

version:
	@echo $(VERSION)

# What `make install` and `make deb` copy: the stripped binary, the man page,
# the shell completions and the example config, under $(STAGE).
stage: build
	scripts/stage.sh $(BADGE) $(STAGE)

man: stage
	cp $(STAGE)/badge.1 badge.1
	@echo "man page: ./badge.1 (man -l badge.1)"

install: stage
	@scripts/install.sh install $(STAGE) "$(DESTDIR)" "$(PREFIX)"

uninstall:
	@scripts/install.sh uninstall $(STAGE) "$(DESTDIR)" "$(PREFIX)"

# badge_$(VERSION)_<arch>.deb in .build/deb/ (dpkg-deb; Depends worked out from the binary).
deb:
	@scripts/make-deb.sh --check-tools
	@$(MAKE) --no-print-directory stage
	@scripts/make-deb.sh $(STAGE) $(VERSION) .build/deb

# The .deb installed by apt into a minimal Debian 12 (debootstrap) and used there.
check-package:
	@scripts/install-deps.sh --with-package
	@$(MAKE) --no-print-directory deb
	@scripts/check-package.sh .build/deb/badge_$(VERSION)_$$(dpkg --print-architecture).deb

clean:
	rm -rf .build out
