.PHONY: run test deps build format

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
