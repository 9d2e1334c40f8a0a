# The two commands a fresh Debian machine needs (as root, or with sudo):
#   make demo   installs what is missing, builds, and makes a procedural badge
#   make test   installs what is missing and runs every test
SWIFT ?= swift
# SwiftPM's scratch path for the release build: CI builds the .deb's binary in one
# of its own (SCRATCH=.build-release), beside the suite that holds .build's lock.
SCRATCH ?= .build
BADGE := $(SCRATCH)/release/badge
# One source of truth for the version: BadgeMetadata.version, which `badge --version`
# prints, `badge:generator` records, and the .deb is named after.
VERSION := $(shell sed -n 's/^ *public static let version = "\([^"]*\)"$$/\1/p' Sources/BadgeKit/BadgeMetadata.swift)
PREFIX ?= /usr/local
DESTDIR ?=
STAGE := .build/stage

.PHONY: deps build binary demo test test-release test-optimised sanitize bench fuzz man gallery clean version stage install uninstall deb check-package

deps:
	@scripts/install-deps.sh

# The release binary's link, tuned for start-up (docs/PERFORMANCE.md has the figures):
# a static Swift runtime (fewer symbols to bind), lld with packed relative relocations,
# and no exported symbols. These are options of this build, not of the package: a
# package that depends on badge links its own way. No DWARF: the installed binary is
# stripped (scripts/stage.sh), and writing it costs the release build about a tenth.
RELEASE_FLAGS := --scratch-path $(SCRATCH) -c release -debug-info-format none --static-swift-stdlib -Xswiftc -use-ld=lld \
	-Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic

build: deps
	@$(MAKE) --no-print-directory binary

# The release binary alone, with nothing installed first.
binary:
	$(SWIFT) build $(RELEASE_FLAGS) --product badge

demo: build
	$(BADGE) generate --backend procedural "A pair of dumbbells"
	@echo
	$(BADGE) show

# Installs what the tests use, builds, runs every test target and the consumer
# package's build; prints each stage's time (scripts/test.sh).
test:
	SWIFT=$(SWIFT) scripts/test.sh

# The end-to-end suite (BadgeCLITests) against the stripped release binary that
# make deb packages, after the test build (scripts/test-release.sh); CI runs it
# after make test. The tests that need the debug-only seams are skipped, by name.
test-release: stage
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/test-release.sh $(STAGE)/badge

# The unit suites (every target but BadgeCLITests) built with the optimiser, as the
# release binary is, in a scratch path of their own (docs/DEVELOPING.md, "The
# release binary under test", has its cost and why CI does not run it).
test-optimised:
	$(SWIFT) build -c release -Xswiftc -enable-testing --build-tests --scratch-path .build-optimised
	$(SWIFT) test -c release -Xswiftc -enable-testing --scratch-path .build-optimised --skip-build --skip BadgeCLITests

# The suites that exercise badge's threads, locks and raw memory under
# ThreadSanitizer, then AddressSanitizer, each in a scratch path of its own
# (.build-tsan, .build-asan); prints each stage's time (scripts/sanitize.sh;
# docs/DEVELOPING.md, "Sanitizers", has what runs, its cost and why CI does not).
# SANITIZERS=thread or SANITIZERS=address runs one.
SANITIZERS ?= thread address
sanitize:
	SWIFT=$(SWIFT) scripts/sanitize.sh $(SANITIZERS)

bench: build
	@scripts/install-deps.sh --with-bench
	@python3 -c "import dicebear, dicebear_styles" 2>/dev/null || python3 -m pip install -q dicebear-core dicebear-styles \
		|| python3 -m pip install -q --break-system-packages dicebear-core dicebear-styles
	$(SWIFT) build $(RELEASE_FLAGS) --product BadgeBench
	@/usr/bin/python3 scripts/bench.py

# libFuzzer + ASan, FUZZ_SECONDS each: the image header reader, then badge's
# deflate against zlib's inflate (new inputs go to a scratch directory; a crash
# or a difference fails the target and names its input).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

gallery: build
	scripts/gallery.sh

version:
	@echo $(VERSION)

# What `make install` and `make deb` copy: the stripped binary, the man page,
# the shell completions and the example config, under $(STAGE).
# BUILT=yes stages the binary already in $(SCRATCH) without asking SwiftPM again:
# CI builds it beside the tests, and a second `swift build` of an unchanged tree
# there has been seen to compile two of Hummingbird's modules again (45 s).
stage: $(if $(filter yes,$(BUILT)),,build)
	scripts/stage.sh $(BADGE) $(STAGE)

man: stage
	cp $(STAGE)/badge.1 badge.1
	@echo "man page: ./badge.1 (man -l badge.1)"

install: stage
	@scripts/install.sh install $(STAGE) "$(DESTDIR)" "$(PREFIX)"

uninstall:
	@scripts/install.sh uninstall $(STAGE) "$(DESTDIR)" "$(PREFIX)"

# badge_$(VERSION)_<arch>.deb in .build/deb/ (dpkg-deb; Depends worked out from the binary;
# compressed with xz at DEB_XZ_LEVEL, Debian's 6 unless set).
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
	rm -rf .build .build-release out
