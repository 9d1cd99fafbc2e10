# Builds arena, its in-container agent and the example bots into bin/.
# Everything is static (CGO_ENABLED=0) so it runs in any image.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
export CGO_ENABLED = 0

.PHONY: all build examples image test clean
all: build examples

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/arena ./cmd/arena
	$(GO) build -trimpath -ldflags '-s -w' -o bin/arena-agent ./cmd/arena-agent

examples:
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/random ./examples/random
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/greedy ./examples/greedy
	for g in chess acm6x6 checkers; do $(GO) build -trimpath -ldflags '-s -w' -o bin/examples/$$g-random ./examples/line-random || exit 1; done
	cp examples/checkers/random_bot.py bin/examples/checkers_random_bot.py
	cp examples/python/random_bot.py bin/examples/random.py
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/tiles-random ./examples/tiles-random
	cp examples/tiles/random_bot.py bin/examples/tiles_random_bot.py

# The runtime image on ubuntu:24.04 (needs the base on the engine).
image: build
	bin/arena image build

test:
	bash scripts/test.sh

clean:
	rm -rf bin
