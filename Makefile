# Builds arena, its in-container agent, its built-in random bot, the team's
# build of arena (-tags team: what the event site offers teams) and the
# example bots into bin/.
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
	$(GO) build -trimpath -ldflags '-s -w' -o bin/arena-random ./cmd/arena-random
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -tags team -o bin/arena-team ./cmd/arena

examples:
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/random ./examples/random
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/greedy ./examples/greedy
	for g in chess acm6x6 checkers; do $(GO) build -trimpath -ldflags '-s -w' -o bin/examples/$$g-random ./cmd/arena-random || exit 1; done
	cp examples/checkers/random_bot.py bin/examples/checkers_random_bot.py
	cp examples/python/random_bot.py bin/examples/random.py
	$(GO) build -trimpath -ldflags '-s -w' -o bin/examples/tiles-random ./examples/tiles-random
	cp examples/tiles/random_bot.py bin/examples/tiles_random_bot.py
	rm -rf bin/examples/submissions
	$(call submission,codeclash,random,bin/examples/random examples/random/main.go examples/random/README.md)
	$(call submission,codeclash,greedy,bin/examples/greedy examples/greedy/main.go examples/greedy/README.md)
	$(call submission,codeclash,python,examples/python/random_bot.py examples/python/README.md)
	$(call submission,chess,line-random,bin/examples/chess-random cmd/arena-random/main.go harness/randombot/randombot.go cmd/arena-random/README.md)
	$(call submission,acm6x6,line-random,bin/examples/acm6x6-random cmd/arena-random/main.go harness/randombot/randombot.go cmd/arena-random/README.md)
	$(call submission,checkers,line-random,bin/examples/checkers-random cmd/arena-random/main.go harness/randombot/randombot.go cmd/arena-random/README.md)
	$(call submission,checkers,python,examples/checkers/random_bot.py examples/checkers/README.md)
	$(call submission,tiles,tiles-random,bin/examples/tiles-random examples/tiles-random/main.go examples/tiles-random/README.md)
	$(call submission,tiles,python,examples/tiles/random_bot.py examples/tiles/README.md)

# Each example is also a complete submission, as arena validate --game GAME
# checks it: what runs, its source and its README, in
# bin/examples/submissions/GAME/NAME (a batch: --batch bin/examples/submissions/GAME).
submission = mkdir -p bin/examples/submissions/$(1)/$(2) && cp $(3) bin/examples/submissions/$(1)/$(2)/

# The runtime image on ubuntu:24.04 (needs the base on the engine).
image: build
	bin/arena image build

test:
	bash scripts/test.sh

clean:
	rm -rf bin
