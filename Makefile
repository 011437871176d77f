.PHONY: run test deps build

run:
	scripts/run

test:
	scripts/test

deps:
	scripts/install-deps.sh

build:
	swift build
