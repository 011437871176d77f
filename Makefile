.PHONY: run test deps build format release

run:
	scripts/run

test:
	scripts/test

deps:
	scripts/install-deps.sh

build:
	swift build

format:
	swift format format --in-place --recursive --parallel Sources Tests fuzz Package.swift

# One binary to copy: onboard with the Swift runtime and Foundation linked in
# (--static-swift-stdlib), needing only Debian 12's libpq5, libssl3, libcrypt1 and libcurl4 (and,
# for the embedded cluster only, PostgreSQL's binaries). The Dockerfile builds with this target;
# SWIFT_BUILD_ARGS adds arguments (scripts/check-docker: its own --scratch-path).
RELEASE = swift build -c release --static-swift-stdlib --product onboard $(SWIFT_BUILD_ARGS)
release:
	$(RELEASE)
	@bin="$$($(RELEASE) --show-bin-path)/onboard"; \
	  echo "$$bin: $$(du -h "$$bin" | cut -f1) ($$(stat -c %s "$$bin") bytes)"; \
	  echo "needs (beside libc, libm, libstdc++, libgcc_s): $$(objdump -p "$$bin" | awk '/NEEDED/ {print $$2}' | grep -vE '^(libc|libm|libstdc\+\+|libgcc_s)\.so|^ld-linux' | tr '\n' ' ')"; \
	  ! ldd "$$bin" | grep -q libswiftCore || { echo "the binary still needs the Swift runtime" >&2; exit 1; }
