# mcptray: `make run` starts the app, `make test` runs every check.
# Both install what is missing first (Debian packages, npm test servers, AI clients).

SHELL      := /bin/bash
GO         ?= go
BIN        := bin/mcptray
HEADLESS_BIN := bin/mcptray-headless
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS    := -X mcptray/app.Version=$(VERSION) -X mcptray/app.Commit=$(COMMIT)
export MCPTRAY_TEST_SERVERS := $(CURDIR)/.testservers/node_modules
export MCPTRAY_TEST_TOOLS := $(CURDIR)/.testtools/node_modules
export MCPTRAY_TEST_CLIENTS := $(CURDIR)/.testclients/node_modules

.PHONY: run build test test-windows test-clients cross lint bench fuzz package dist dist-test deps-build deps-test deps-npm deps-tools deps-clients deps-dist clean

run: deps-build build
	./$(BIN)

# One entry point (main.go), two builds: bin/mcptray, the desktop app (Fyne
# and cgo; with no command it opens the tray) with every command, and
# bin/mcptray-headless (-tags nogui: pure Go, starts in a millisecond, needs
# no GUI libraries) for servers and containers.
build: deps-build
	CGO_ENABLED=1 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .
	CGO_ENABLED=0 $(GO) build -tags nogui -ldflags "$(LDFLAGS)" -o $(HEADLESS_BIN) .

test: deps-test deps-npm deps-tools deps-clients
	@echo "== gofmt"; out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	@echo "== go vet"; $(GO) vet ./...
	@echo "== staticcheck"; $(STATICCHECK) ./...
	@# go.mod must say what the code imports: a module imported directly is
	@# not "// indirect", and nothing is listed that nothing needs.
	@echo "== go mod tidy"; $(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@echo "== go test -race"
	@# GUI tests need a display and a D-Bus session bus (the tray is a D-Bus
	@# StatusNotifierItem): run the tests inside both (installed by deps-test).
	$(eval HEADLESS := $(shell command -v xvfb-run >/dev/null && command -v dbus-run-session >/dev/null && echo 'xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session --'))
	CGO_ENABLED=1 $(HEADLESS) $(GO) test -race -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory cross
	@$(MAKE) --no-print-directory test-windows
	@# A count, not a duration: Go 1.26's fuzz coordinator can fail a target
	@# with a bare "context deadline exceeded" as a -fuzztime duration ends
	@# (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20000x
	@# The release packages: built, installed into a clean Debian 12, and
	@# the Windows ones run under Wine, as root with Debian's apt
	@# (MCPTRAY_TEST_DIST=0 leaves them out). From a fresh clone on a loaded
	@# 2-core machine, with GoReleaser and the build cache warm: make dist
	@# 7 minutes, make dist-test 2.5.
	@if [ "$${MCPTRAY_TEST_DIST:-1}" = 0 ]; then echo "== dist-test: not run (MCPTRAY_TEST_DIST=0)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then $(MAKE) --no-print-directory dist dist-test; \
	else echo "== dist-test: skipped: needs root and apt-get (debootstrap, chroot); run make dist dist-test as root"; fi

# Only the tests that drive the real AI clients (Claude Code, Gemini CLI,
# Codex, GitHub Copilot CLI, Qwen Code and mcp-remote from npm, pinned in
# testdata/clients/package.json).
test-clients: deps-npm deps-clients
	$(GO) test -race -count=1 -timeout 30m -v ./registry/clients/realclients/

# Windows and macOS on every change, from here: both Windows binaries
# cross-built (the desktop app with mingw-w64's gcc for cgo, the headless one
# in pure Go), every package vetted for Windows, tests included (vet
# type-checks them: a test that does not compile for Windows fails), and for
# macOS every package that builds without cgo (app/gui, its Fyne floor and the desktop build
# need the macOS SDK; see packaging/README.md).
WINCC      ?= x86_64-w64-mingw32-gcc
cross:
	@echo "== cross: windows"
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(WINCC) $(GO) build -ldflags "$(LDFLAGS)" -o bin/windows/mcptray.exe .
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -tags nogui -ldflags "$(LDFLAGS)" -o bin/windows/mcptray-headless.exe .
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(WINCC) $(GO) vet ./...
	@echo "== cross: darwin (no cgo)"
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) vet -tags nogui $$(GOOS=darwin $(GO) list -e -tags nogui ./... 2>/dev/null | grep -v -e '^mcptray/app/gui$$' -e '^mcptray/app/gui/floor$$')

# Every package's Windows tests, run under Wine 10 from a Debian 13 system
# the script makes once and keeps in /var/cache/mcptray-wine (root needed;
# see packaging/wine/test-windows.sh and packaging/README.md), then the
# desktop build's version and check of the demo server.
test-windows: deps-test
	@echo "== windows tests under Wine"
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(WINCC) $(GO) build -ldflags "$(LDFLAGS)" -o bin/windows/mcptray.exe .
	GO=$(GO) DESKTOP_EXE=bin/windows/mcptray.exe ./packaging/wine/test-windows.sh

# staticcheck at a version built for this Go, run from the module proxy's
# copy (it is a tool, not a dependency of the code: go.mod does not list it).
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

FUZZTIME ?= 100000x
fuzz:
	@echo "== fuzz ($(FUZZTIME) inputs each)"
	$(GO) test ./registry -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry/clients -run '^$$' -fuzz '^FuzzImport$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry/clients -run '^$$' -fuzz '^FuzzParseSnippet$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry/bundle -run '^$$' -fuzz '^FuzzParseManifest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry/bundle -run '^$$' -fuzz '^FuzzCleanRel$$' -fuzztime $(FUZZTIME)
	$(GO) test ./healthcheck -run '^$$' -fuzz '^FuzzWireLines$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry/tooltrust -run '^$$' -fuzz '^FuzzCanonical$$' -fuzztime $(FUZZTIME)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# `make package` builds the desktop package for this OS with fyne package
# (Linux: mcptray.tar.xz with the .desktop file and icon; macOS: mcptray.app;
# Windows: mcptray.exe with its icon). Metadata comes from FyneApp.toml.
FYNE       := $(GO) run fyne.io/tools/cmd/fyne@v1.7.4
PKG_OS     ?= $(shell $(GO) env GOOS)
package: deps-build
	@# fyne package bumps Build in FyneApp.toml: keep the file as it was.
	@mkdir -p bin && cp FyneApp.toml bin/.FyneApp.toml
	GOFLAGS="-ldflags=-X=mcptray/app.Version=$(VERSION)" $(FYNE) package --os $(PKG_OS) --release --name mcptray \
	  --app-version $(shell sed -n 's/^Version *= *"\(.*\)"/\1/p' FyneApp.toml); \
	  rc=$$?; cp bin/.FyneApp.toml FyneApp.toml; exit $$rc
	@# macOS: a menu-bar app without a Dock icon (LSUIElement), macOS 11+.
	@if [ "$(PKG_OS)" = darwin ]; then $(GO) run ./packaging/plistmerge mcptray.app/Contents/Info.plist packaging/Info.plist.fragment; fi
	@ls -l mcptray.tar.xz mcptray.app mcptray.exe 2>/dev/null || true

# `make dist`: every release artefact in dist/ from this commit, with
# GoReleaser (.goreleaser.yaml; built once into $(DIST_CACHE)): .deb, .rpm
# and .tar.gz for Linux amd64 (both builds), headless .tar.gz for Linux arm64
# and macOS, .zip and .msi for Windows, checksums.txt. See packaging/README.md.
# `make dist-test` checks them and installs the .deb into a clean Debian 12.
GORELEASER_VERSION := v2.15.1
DIST_CACHE ?= $(HOME)/.cache/mcptray-dist
GORELEASER := $(DIST_CACHE)/goreleaser-$(GORELEASER_VERSION)/goreleaser
dist: deps-dist $(GORELEASER)
	rm -rf dist build/docs build/assets rsrc_windows_amd64.syso
	@# GoReleaser reads the commit only where `git ls-remote --get-url`
	@# answers: a checkout with no remote gets one for this command alone.
	$(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=$(CURDIR)) \
	  $(GORELEASER) release --snapshot --clean --skip=publish
	@# GoReleaser has no MSI (that is its Pro edition): wixl makes it from
	@# the Windows builds GoReleaser made, then checksums.txt gets its line.
	@set -e; v=$$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json); \
	  win=$$(dirname $$(ls dist/desktop-windows_windows_amd64*/mcptray.exe)); \
	  hwin=$$(dirname $$(ls dist/headless-windows_windows_amd64*/mcptray-headless.exe)); \
	  mkdir -p build/msi && cp $$win/mcptray.exe $$hwin/mcptray-headless.exe build/msi/; \
	  wixl -a x64 -D Version=$$(echo $$v | sed 's/[-~+].*//') -D BinDir=build/msi -D IconFile=build/assets/mcptray.ico \
	    -o dist/mcptray_$${v}_windows_amd64.msi packaging/windows/mcptray.wxs; \
	  (cd dist && sha256sum mcptray_$${v}_windows_amd64.msi >> checksums.txt)
	rm -f rsrc_windows_amd64.syso
	@ls -l dist/*.deb dist/*.rpm dist/*.tar.gz dist/*.zip dist/*.msi dist/checksums.txt

$(GORELEASER):
	GOFLAGS= GOBIN=$(dir $@) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

dist-test: deps-dist
	./packaging/dist-test.sh

deps-dist:
	@./packaging/ensure-deps.sh dist

# Ratios against baselines measured in the same run (see packaging/bench).
bench: deps-test deps-npm build
	$(GO) build -o bin/mcptray-bench ./packaging/bench
	CGO_ENABLED=0 $(GO) build -o bin/mcptray-bare ./packaging/bench/bareclient
	xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
	  bin/mcptray-bench -mcptray $(BIN) -headless $(HEADLESS_BIN) -bare bin/mcptray-bare -servers .testservers/node_modules $(BENCHFLAGS)

deps-build:
	@./packaging/ensure-deps.sh build

deps-test:
	@./packaging/ensure-deps.sh test

deps-npm:
	@./packaging/ensure-deps.sh npm

deps-tools:
	@./packaging/ensure-deps.sh tools

deps-clients:
	@./packaging/ensure-deps.sh clients

clean:
	rm -rf bin dist build rsrc_windows_amd64.syso .testservers .testtools .testclients mcptray.tar.xz mcptray.app mcptray.exe
