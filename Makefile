# Router: the operator and developer entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

install: ## Install dependencies exactly as locked
	npm ci

proto: ## Regenerate libs/proto/src/generated from proto/ (ts-proto via buf)
	rm -rf libs/proto/src/generated
	cd proto && npx buf lint && npx buf generate

proto-check: ## Fail when the generated protobuf code is stale
	@tmp=$$(mktemp -d) && cp -r libs/proto/src/generated $$tmp/before && \
	$(MAKE) -s proto >/dev/null && \
	if ! diff -r $$tmp/before libs/proto/src/generated >/dev/null; then \
	  echo "generated protobuf code is stale: run 'make proto' and commit the result"; rm -rf $$tmp; exit 1; fi; \
	rm -rf $$tmp; echo "generated protobuf code is up to date"

asyncapi: ## Regenerate docs/asyncapi.yaml from proto/router/events/v1 and the topic table (its test fails when stale)
	ASYNCAPI_WRITE=1 npx jest libs/proto/test/asyncapi.test.ts

build: ## Type-check and compile every library and service, and build the dashboard (Vite)
	npx tsc -b
	npm run build -w @router/dashboard

typecheck-tests: ## Type-check the test sources (jest runs them through swc, which does not)
	npx tsc -p tsconfig.test.json

services: ## Start local Postgres and Redis if they are not running
	@./.ci/ensure-services

eslint: ## ESLint with typescript-eslint's type-checked rules over sources, tests and e2e
	npx eslint --max-warnings 0 .

test: services proto-check build typecheck-tests eslint ## Unit, integration and end-to-end tests (needs Postgres and Redis)
	npx jest --ci

test-kafka: services build ## Every test with the end-to-end stacks on Kafka: KAFKA_BROKERS=host:port make test-kafka
	@test -n "$(KAFKA_BROKERS)" || { echo "KAFKA_BROKERS: set it to a Kafka broker, e.g. docker run -d -p 9092:9092 apache/kafka:3.8.0, then KAFKA_BROKERS=localhost:9092 make test-kafka"; exit 2; }
	ROUTER_BUS=kafka KAFKA_BROKERS="$(KAFKA_BROKERS)" npx jest --ci

start: ## Run the whole stack in one process with embedded defaults (builds first only what changed)
	node --v8-pool-size=1 scripts/start.js

up: ## Run every service with Kafka, Postgres and Redis (needs a Docker engine)
	docker compose up --build

bench: build ## Measure the gateway's added latency and memory against the fake upstream
	node bench/dist/overhead.js

bench-plan: build ## Routing's Plan computation in process for a model with 50 endpoints (p50/p90/p99)
	node bench/dist/plan.js

bench-embedded: build ## The one-process default (npm start) under open-loop load, with its resident memory (BENCH_RATES, default 300,800)
	node bench/dist/embedded.js

bench-content-filter: build ## The gateway's content filters (6 builtins + 20 patterns) over a 2 KB conversation (p50/p90/p99)
	node bench/dist/content-filter.js

bench-management: build ## A management read authenticated with a key and with a dashboard session, side by side
	node bench/dist/management-read.js

bench-hop: build ## What one hop costs on this box: CPU per message, back to back and at 300/s spacing (Node to Node, Node to Postgres)
	node bench/dist/hop-cost.js

lint: ## Lint the protobuf contracts, type-check everything (tests included) and run ESLint
	cd proto && npx buf lint
	npx tsc -b
	npx tsc -p services/console/dashboard
	npx tsc -p tsconfig.test.json
	npx eslint --max-warnings 0 .

.PHONY: help install proto proto-check asyncapi build typecheck-tests eslint services test test-kafka start up bench bench-plan bench-embedded bench-content-filter bench-management bench-hop lint
